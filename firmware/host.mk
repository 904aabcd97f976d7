# Host builds of the protocol core (gcc): the host adapter program and the test programs that
# tests/firmware/ drive. `make -C firmware host`.
include $(dir $(lastword $(MAKEFILE_LIST)))core.mk

HOST_DIR := $(BUILD_DIR)/host
HOST_CC ?= gcc
HOST_CFLAGS ?= -std=c11 -Wall -Wextra -Werror -pedantic -O2 -g
SANITIZE_FLAGS := -std=c11 -Wall -Wextra -Werror -pedantic -O1 -g -fsanitize=address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer

HOST_PROGRAM := $(HOST_DIR)/hilbridge-fw-host
HOST_SANITIZED := $(HOST_DIR)/hilbridge-fw-host-asan
HOST_TEST := $(HOST_DIR)/hb-core-test
HOST_SOURCES := $(CORE_SOURCES) $(FIRMWARE_DIR)/src/host/fw_host.c
TEST_SOURCES := $(CORE_SOURCES) $(GEN_DIR)/protocol_codec_gen.c $(FIRMWARE_DIR)/src/host/core_test.c

.PHONY: host
host: $(HOST_PROGRAM) $(HOST_SANITIZED) $(HOST_TEST)

$(HOST_PROGRAM): $(HOST_SOURCES) $(CORE_HEADERS) | $(GEN_FILES)
	@mkdir -p $(HOST_DIR)
	$(HOST_CC) $(HOST_CFLAGS) $(CORE_INCLUDES) -o $@ $(HOST_SOURCES)

$(HOST_SANITIZED): $(HOST_SOURCES) $(CORE_HEADERS) | $(GEN_FILES)
	@mkdir -p $(HOST_DIR)
	$(HOST_CC) $(SANITIZE_FLAGS) $(CORE_INCLUDES) -o $@ $(HOST_SOURCES)

$(HOST_TEST): $(TEST_SOURCES) $(CORE_HEADERS) $(GEN_DIR)/protocol_codec_gen.h | $(GEN_FILES)
	@mkdir -p $(HOST_DIR)
	$(HOST_CC) $(HOST_CFLAGS) $(CORE_INCLUDES) -o $@ $(TEST_SOURCES)

# The core must build for the RP2040 with nothing but the compiler's own freestanding headers (no C
# library is installed with gcc-arm-none-eabi --no-install-recommends), and link with only libgcc:
# compiled so and linked without start-up code, which would report any symbol the core lacks.
ARM_CC ?= arm-none-eabi-gcc
FREESTANDING_DIR := $(BUILD_DIR)/freestanding
FREESTANDING_FLAGS := -mcpu=cortex-m0plus -mthumb -std=c11 -Os -Wall -Wextra -Werror -pedantic -ffreestanding \
	-nostdinc -isystem $(shell $(ARM_CC) -print-file-name=include 2>/dev/null)

FREESTANDING_OBJECTS := $(addprefix $(FREESTANDING_DIR)/,$(notdir $(CORE_SOURCES:.c=.o)))
vpath %.c $(sort $(dir $(CORE_SOURCES)))

.PHONY: freestanding-check
freestanding-check: $(FREESTANDING_DIR)/core.elf

$(FREESTANDING_DIR)/core.elf: $(FREESTANDING_OBJECTS)
	$(ARM_CC) -mcpu=cortex-m0plus -mthumb -nostdlib -Wl,--entry=0 -o $@ $^ -lgcc

$(FREESTANDING_DIR)/%.o: %.c $(CORE_HEADERS) | $(GEN_FILES)
	@mkdir -p $(FREESTANDING_DIR)
	$(ARM_CC) $(FREESTANDING_FLAGS) $(CORE_INCLUDES) -c $< -o $@
