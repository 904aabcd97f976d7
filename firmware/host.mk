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
