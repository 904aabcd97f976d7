# The bus engines (src/bus): headers generated from the pin map, the PIO programs and the bus timing.
# Include after core.mk (it defines GEN_DIR) and before rp2040.mk, which compiles src/bus/*.c and
# waits for ARM_EXTRA_GENERATED. gen_pio.py needs adafruit_pioasm importable by $(PYTHON)
# (pip install --no-deps adafruit-circuitpython-pioasm).
ifndef CORE_SOURCES
include $(dir $(lastword $(MAKEFILE_LIST)))core.mk
endif

BUS_TOOLS := $(FIRMWARE_DIR)/tools
BUS_PINS := $(FIRMWARE_DIR)/board/pins.tsv
BUS_GENERATED := $(GEN_DIR)/pins_gen.h $(GEN_DIR)/pio_gen.h $(GEN_DIR)/bus_timing_gen.h
ARM_EXTRA_GENERATED += $(BUS_GENERATED)

$(GEN_DIR)/pins_gen.h: $(BUS_PINS) $(BUS_TOOLS)/gen_pins.py
	@mkdir -p $(dir $@)
	$(PYTHON) $(BUS_TOOLS)/gen_pins.py header $@

$(GEN_DIR)/pio_gen.h: $(wildcard $(FIRMWARE_DIR)/pio/*.pio) $(FIRMWARE_DIR)/pio/engines.tsv $(BUS_PINS) \
		$(BUS_TOOLS)/gen_pio.py $(BUS_TOOLS)/gen_pins.py
	@mkdir -p $(dir $@)
	$(PYTHON) $(BUS_TOOLS)/gen_pio.py $@

$(GEN_DIR)/bus_timing_gen.h: $(FIRMWARE_DIR)/board/bus_timing.tsv $(BUS_TOOLS)/gen_timing.py
	@mkdir -p $(dir $@)
	$(PYTHON) $(BUS_TOOLS)/gen_timing.py $@

.PHONY: bus-generate
bus-generate: $(BUS_GENERATED)
