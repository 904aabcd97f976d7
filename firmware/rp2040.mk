# The RP2040 image: platform (src/platform), protocol core and cartridge logic (core.mk), bus engines
# (src/bus, with headers generated from the pin map, the PIO programs and the bus timing), our boot2
# sealed with its CRC, linked by link.ld, written as UF2 by hilbridge.firmware.
# Needs arm-none-eabi-gcc (Debian: gcc-arm-none-eabi) and python3 with this checkout importable;
# tools/gen_pio.py needs adafruit_pioasm (pip install --no-deps adafruit-circuitpython-pioasm).
ifndef CORE_SOURCES
include $(dir $(lastword $(MAKEFILE_LIST)))core.mk
endif

CROSS ?= arm-none-eabi-
ARM_CC := $(CROSS)gcc
ARM_OBJCOPY := $(CROSS)objcopy
ARM_SIZE := $(CROSS)size
HOST_PY = PYTHONPATH=$(PROJECT_ROOT)$(if $(PYTHONPATH),:$(PYTHONPATH)) $(PYTHON)

ARM_DIR := $(BUILD_DIR)/rp2040
ARM_TARGET := $(BUILD_DIR)/hilbridge-adapter
ARCH := -mcpu=cortex-m0plus -mthumb
ARM_CFLAGS := $(ARCH) -std=c11 -Os -g -Wall -Wextra -Werror -ffreestanding -fno-tree-loop-distribute-patterns -ffunction-sections -fdata-sections \
	-I$(FIRMWARE_DIR)/rp2040 -I$(FIRMWARE_DIR)/src/platform -I$(FIRMWARE_DIR)/src/bus $(CORE_INCLUDES) \
	$(EXTRA_CFLAGS)
ARM_ASFLAGS := $(ARCH) -I$(FIRMWARE_DIR)/rp2040
ARM_LDFLAGS := $(ARCH) -nostdlib -Wl,--gc-sections -Wl,-Map=$(ARM_TARGET).map

ARM_SOURCES := $(wildcard $(FIRMWARE_DIR)/src/platform/*.c $(FIRMWARE_DIR)/src/bus/*.c) $(CORE_SOURCES)
ARM_OBJECTS := $(addprefix $(ARM_DIR)/,$(notdir $(ARM_SOURCES:.c=.o))) $(ARM_DIR)/boot2_sealed.o
TOOLS := $(FIRMWARE_DIR)/tools
PINS := $(FIRMWARE_DIR)/board/pins.tsv
BUS_GENERATED := $(GEN_DIR)/pins_gen.h $(GEN_DIR)/pio_gen.h $(GEN_DIR)/bus_timing_gen.h
ARM_GENERATED := $(GEN_DIR)/usb_descriptors.h $(GEN_DIR)/firmware_build.h $(GEN_FILES) $(BUS_GENERATED)
vpath %.c $(sort $(dir $(ARM_SOURCES)))

.PHONY: rp2040
rp2040: $(ARM_TARGET).uf2
	@$(ARM_SIZE) $(ARM_TARGET).elf

$(ARM_TARGET).elf: $(ARM_OBJECTS) $(FIRMWARE_DIR)/link.ld
	$(ARM_CC) $(ARM_LDFLAGS) -T $(FIRMWARE_DIR)/link.ld -o $@ $(ARM_OBJECTS) -lgcc

$(ARM_TARGET).bin: $(ARM_TARGET).elf
	$(ARM_OBJCOPY) -O binary $< $@

$(ARM_TARGET).uf2: $(ARM_TARGET).bin
	$(HOST_PY) -m hilbridge.firmware.mkuf2 $< $@

# boot2 is assembled and linked on its own (it runs from SRAM), then sealed with its CRC-32.
$(ARM_DIR)/boot2.elf: $(FIRMWARE_DIR)/boot2/boot2.S $(FIRMWARE_DIR)/boot2/boot2.ld $(FIRMWARE_DIR)/rp2040/regs.h
	@mkdir -p $(dir $@)
	$(ARM_CC) $(ARM_ASFLAGS) -nostdlib -T $(FIRMWARE_DIR)/boot2/boot2.ld -o $@ $<

$(ARM_DIR)/boot2.bin: $(ARM_DIR)/boot2.elf
	$(ARM_OBJCOPY) -O binary $< $@

$(GEN_DIR)/boot2_sealed.S: $(ARM_DIR)/boot2.bin $(PROJECT_ROOT)/hilbridge/firmware/uf2.py | $(GEN_DIR)
	$(HOST_PY) -m hilbridge.firmware.boot2 $< $@

$(ARM_DIR)/boot2_sealed.o: $(GEN_DIR)/boot2_sealed.S
	$(ARM_CC) $(ARM_ASFLAGS) -c -o $@ $<

# Generated headers: each written by one generator from its table.
$(GEN_DIR):
	@mkdir -p $@

$(GEN_DIR)/usb_descriptors.h: $(PROJECT_ROOT)/hilbridge/firmware/usb_descriptors.json \
		$(PROJECT_ROOT)/hilbridge/firmware/usb_descriptors.py $(PROJECT_ROOT)/hilbridge/link/usb.py | $(GEN_DIR)
	$(HOST_PY) -m hilbridge.firmware.usb_descriptors $< $@

$(GEN_DIR)/firmware_build.h: $(PROJECT_ROOT)/hilbridge/__init__.py $(PROJECT_ROOT)/hilbridge/firmware/version.py \
		| $(GEN_DIR)
	$(HOST_PY) -m hilbridge.firmware.version $@

$(GEN_DIR)/pins_gen.h: $(PINS) $(TOOLS)/gen_pins.py | $(GEN_DIR)
	$(PYTHON) $(TOOLS)/gen_pins.py header $@

$(GEN_DIR)/pio_gen.h: $(wildcard $(FIRMWARE_DIR)/pio/*.pio) $(FIRMWARE_DIR)/pio/engines.tsv $(PINS) \
		$(TOOLS)/gen_pio.py $(TOOLS)/gen_pins.py | $(GEN_DIR)
	$(PYTHON) $(TOOLS)/gen_pio.py $@

$(GEN_DIR)/bus_timing_gen.h: $(FIRMWARE_DIR)/board/bus_timing.tsv $(TOOLS)/gen_timing.py | $(GEN_DIR)
	$(PYTHON) $(TOOLS)/gen_timing.py $@

$(ARM_DIR)/%.o: %.c $(ARM_GENERATED)
	@mkdir -p $(dir $@)
	$(ARM_CC) $(ARM_CFLAGS) -MMD -MP -c -o $@ $<

-include $(ARM_OBJECTS:.o=.d)

# The sniff decoder, the capture record path (protocol core, frame writer, CRC) and the USB copy run per console
# access: optimised for speed (-Os spills the decoder's loop state and calls the one-line byte and
# CRC steps instead of inlining them). So do the byte functions (mem.c: -Os spills the words of a
# copy's turn to the stack).
$(ARM_DIR)/sniff_decode.o $(ARM_DIR)/adapter_core.o $(ARM_DIR)/frame.o $(ARM_DIR)/crc32.o $(ARM_DIR)/usb.o \
	$(ARM_DIR)/mem.o: ARM_CFLAGS += -O2
