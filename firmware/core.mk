# The protocol core and cartridge logic: sources shared by the host build (host.mk) and the RP2040
# build, and the rule that generates protocol_gen.* from the host's tables (never committed).
FIRMWARE_DIR ?= $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
PROJECT_ROOT := $(abspath $(FIRMWARE_DIR)/..)
BUILD_DIR ?= $(FIRMWARE_DIR)/build
GEN_DIR := $(BUILD_DIR)/gen
PYTHON ?= python3

GEN_INPUTS := $(FIRMWARE_DIR)/tools/gen_protocol.py \
	$(PROJECT_ROOT)/hilbridge/link/messages.tsv $(PROJECT_ROOT)/hilbridge/link/codes.tsv \
	$(PROJECT_ROOT)/hilbridge/link/capture_record.tsv \
	$(PROJECT_ROOT)/hilbridge/link/protocol.py $(PROJECT_ROOT)/hilbridge/machine/mappers.tsv \
	$(PROJECT_ROOT)/hilbridge/machine/mappers.py $(PROJECT_ROOT)/hilbridge/errors.py \
	$(PROJECT_ROOT)/hilbridge/machine/cartridge.py $(PROJECT_ROOT)/hilbridge/__init__.py
GEN_FILES := $(GEN_DIR)/protocol_gen.h $(GEN_DIR)/protocol_gen.c $(GEN_DIR)/protocol_codec_gen.h \
	$(GEN_DIR)/protocol_codec_gen.c

CORE_SOURCES := $(FIRMWARE_DIR)/src/core/adapter_core.c $(FIRMWARE_DIR)/src/core/frame.c \
	$(FIRMWARE_DIR)/src/core/crc32.c $(FIRMWARE_DIR)/src/core/mem.c $(FIRMWARE_DIR)/src/cart/cart.c \
	$(GEN_DIR)/protocol_gen.c
CORE_HEADERS := $(wildcard $(FIRMWARE_DIR)/src/core/*.h $(FIRMWARE_DIR)/src/cart/*.h) $(GEN_DIR)/protocol_gen.h
CORE_INCLUDES := -I$(FIRMWARE_DIR)/src/core -I$(FIRMWARE_DIR)/src/cart -I$(GEN_DIR)

# One generator run writes all four files; the stamp keeps make from running it once per file.
$(GEN_FILES): $(GEN_DIR)/.stamp
$(GEN_DIR)/.stamp: $(GEN_INPUTS)
	$(PYTHON) $(FIRMWARE_DIR)/tools/gen_protocol.py $(PROJECT_ROOT) $(GEN_DIR)
	@touch $@

.PHONY: generate
generate: $(GEN_DIR)/.stamp
