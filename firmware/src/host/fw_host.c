/* hilbridge-fw-host: the firmware's protocol core on a PC, with a cartridge image in its "slot".
 *
 *   hilbridge-fw-host [--cart FILE --type MAPPER] [--serial TEXT] [--bus-trace FILE] (--pty | --stdio)
 *
 * --pty prints "firmware core on /dev/pts/N" and serves that pseudo-terminal (raw, like a USB CDC
 * port); --stdio speaks the protocol on stdin/stdout and ends at end of input. Without --cart the
 * slot is empty. --bus-trace plays a console's bus accesses (9-byte records cycle:I kind:B
 * address:H value:B p1:B, kind 0 fetch, 1 MOVX read, 2 MOVX write) into the capture while one runs,
 * so captures can be compared with the reference emulator that recorded the trace. */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "adapter_core.h"

#define TRACE_RECORD_SIZE 9u /* a --bus-trace record: cycle:I kind:B address:H value:B p1:B */
#include "cart.h"

#define BOARD_ID_HOST 0x5101u
#define READ_SIZE 65536u
#define WRITE_SIZE 16384u
#define IDLE_WAIT_MS 20
#define TRACE_BATCH 4096u /* accesses played per loop turn */

typedef struct host_board {
    cart slot;
    uint8_t *slot_image;
    bool slot_full;
    uint8_t view[CART_VIEW_SIZE]; /* CPU 0x400-0xFFF of the slot in bank view_bank */
    uint32_t view_bank;
    cart emulated;
    uint8_t p1, p2;
    uint8_t *trace;
    size_t trace_records;
    size_t trace_next;
    bool capturing;
    struct timespec started;
} host_board;

static host_board board;
static adapter_core core;

static uint32_t host_uptime(void *context)
{
    host_board *b = context;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t)(now.tv_sec - b->started.tv_sec) * 1000 + (now.tv_nsec - b->started.tv_nsec) / 1000000;
    return (uint32_t)ms;
}

static bool host_cart_present(void *context) { return ((host_board *)context)->slot_full; }

static void host_set_ports(void *context, uint8_t p1, uint8_t p2)
{
    host_board *b = context;
    b->p1 = p1;
    b->p2 = p2;
}

static void host_cart_read(void *context, uint8_t p1, uint8_t p2, uint8_t strobe, uint16_t address,
                           uint16_t length, uint8_t *out)
{
    host_board *b = context;
    if (strobe == HB_STROBE_PSEN) {
        /* The bank's view, made when the bank changes; the core checked the range lies in it. */
        uint32_t bank = cart_bank(&b->slot, p1);
        if (bank != b->view_bank) {
            cart_program_view(&b->slot, p1, b->view);
            b->view_bank = bank;
        }
        memcpy(out, b->view + (address - HB_PROGRAM_START), length);
        return;
    }
    for (uint16_t i = 0; i < length; i++) out[i] = cart_movx_read(&b->slot, (uint16_t)(address + i), p1, p2);
}

static void host_cart_write(void *context, uint8_t p1, uint8_t p2, uint8_t address, uint8_t value)
{
    (void)p2;
    cart_movx_write(&((host_board *)context)->slot, address, value, p1);
}

static bool host_emulation_start(void *context, const uint8_t *image, uint32_t size, uint8_t mapper_id)
{
    const hb_mapper_type *type = cart_type_by_id(mapper_id);
    if (type == NULL) return false;
    cart_init(&((host_board *)context)->emulated, type, image, size);
    return true;
}

static void host_emulation_stop(void *context) { (void)context; }

static bool host_capture_start(void *context, uint8_t what)
{
    host_board *b = context;
    (void)what; /* the core filters the kinds */
    b->capturing = true;
    b->trace_next = 0;
    return true;
}

static void host_capture_stop(void *context) { ((host_board *)context)->capturing = false; }

static adapter_ops ops = {
    .context = &board,
    .serial = "FWHOST-0001",
    .build = "hilbridge firmware core " HB_PACKAGE_VERSION " (host build)",
    .fw_major = HB_PACKAGE_VERSION_MAJOR,
    .fw_minor = HB_PACKAGE_VERSION_MINOR,
    .fw_patch = HB_PACKAGE_VERSION_PATCH,
    .board_id = BOARD_ID_HOST,
    .capabilities = HB_CAPABILITIES_ALL,
    .uptime_ms = host_uptime,
    .cart_present = host_cart_present,
    .set_ports = host_set_ports,
    .cart_read = host_cart_read,
    .cart_write = host_cart_write,
    .emulation_start = host_emulation_start,
    .emulation_stop = host_emulation_stop,
    .capture_start = host_capture_start,
    .capture_stop = host_capture_stop,
};

static void fail(const char *message, const char *what)
{
    fprintf(stderr, "hilbridge-fw-host: %s%s%s\n", message, what ? ": " : "", what ? what : "");
    exit(2);
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) fail(strerror(errno), path);
    size_t room = 65536, used = 0;
    uint8_t *data = malloc(room);
    size_t n;
    while (data && (n = fread(data + used, 1, room - used, file)) > 0) {
        used += n;
        if (used == room) data = realloc(data, room *= 2);
    }
    if (data == NULL) fail("out of memory", path);
    fclose(file);
    *size = used;
    return data;
}

static void load_slot(const char *path, const char *mapper)
{
    const hb_mapper_type *type = cart_type_by_name(mapper);
    if (type == NULL) fail("unknown mapper type", mapper);
    size_t size;
    board.slot_image = read_file(path, &size);
    if (!cart_size_allowed(type, (uint32_t)size)) fail("the image size does not fit the mapper", path);
    cart_init(&board.slot, type, board.slot_image, (uint32_t)size);
    board.slot_full = true;
    board.view_bank = UINT32_MAX;
}

/* Play the next trace accesses while the core keeps up (the simulated console pauses for the link,
 * as the Python simulator's does; a real console cannot, which is what the drop counters are for). */
static void play_trace(void)
{
    if (!board.capturing || board.trace_next >= board.trace_records) return;
    for (size_t n = 0; n < TRACE_BATCH && board.trace_next < board.trace_records; n++) {
        if (core.chunk_open - core.chunk_head >= CORE_CHUNK_SLOTS / 2u) return;
        const uint8_t *r = board.trace + TRACE_RECORD_SIZE * board.trace_next++;
        uint32_t cycle = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24;
        uint16_t address = (uint16_t)(r[5] | r[6] << 8);
        core_capture_access(&core, cycle, r[4], address, r[7], r[8]);
        if (r[4] == HB_CAPTURE_FETCH && address == 0x406u) break; /* one video frame per turn */
    }
}

static bool write_all(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= (size_t)n;
    }
    return true;
}

static bool flush_output(int fd)
{
    static uint8_t out[WRITE_SIZE];
    size_t n;
    while ((n = core_transmit(&core, out, sizeof out)) > 0)
        if (!write_all(fd, out, n)) return false;
    return true;
}

/* Move bytes between the link and the core until the input ends. */
static int serve(int in, int out)
{
    static uint8_t input[READ_SIZE];
    for (;;) {
        play_trace();
        bool busy = board.capturing && board.trace_next < board.trace_records;
        struct pollfd wait = {.fd = in, .events = POLLIN};
        int ready = poll(&wait, 1, busy || core_has_output(&core) ? 0 : IDLE_WAIT_MS);
        if (ready < 0 && errno != EINTR) return 1;
        if (ready > 0) {
            ssize_t got = read(in, input, sizeof input);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got <= 0) return flush_output(out) ? 0 : 1;
            size_t used = 0;
            while (used < (size_t)got) {
                used += core_receive(&core, input + used, (size_t)got - used);
                if (!flush_output(out)) return 1;
            }
        }
        if (!flush_output(out)) return 1;
    }
}

static int serve_pty(void)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) || unlockpt(master)) fail("cannot open a pty", strerror(errno));
    const char *name = ptsname(master);
    /* Hold the slave open ourselves so the master never reads EOF between host sessions. */
    int slave = open(name, O_RDWR | O_NOCTTY);
    if (slave < 0) fail("cannot open the pty", name);
    struct termios raw;
    tcgetattr(slave, &raw);
    cfmakeraw(&raw);
    tcsetattr(slave, TCSANOW, &raw);
    printf("firmware core on %s\n", name);
    fflush(stdout);
    int result = serve(master, master);
    close(slave);
    close(master);
    return result;
}

int main(int argc, char **argv)
{
    const char *cart_path = NULL, *mapper = NULL, *trace_path = NULL;
    bool pty = false, stdio = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(arg, "--cart") == 0 && has_value) cart_path = argv[++i];
        else if (strcmp(arg, "--type") == 0 && has_value) mapper = argv[++i];
        else if (strcmp(arg, "--serial") == 0 && has_value) ops.serial = argv[++i];
        else if (strcmp(arg, "--bus-trace") == 0 && has_value) trace_path = argv[++i];
        else if (strcmp(arg, "--pty") == 0) pty = true;
        else if (strcmp(arg, "--stdio") == 0) stdio = true;
        else fail("usage: hilbridge-fw-host [--cart FILE --type MAPPER] [--serial TEXT] [--bus-trace FILE] "
                  "(--pty | --stdio)", NULL);
    }
    if (pty == stdio) fail("give one of --pty and --stdio", NULL);
    if ((cart_path == NULL) != (mapper == NULL)) fail("--cart and --type go together", NULL);
    if (cart_path) load_slot(cart_path, mapper);
    if (trace_path) {
        size_t size;
        board.trace = read_file(trace_path, &size);
        if (size % TRACE_RECORD_SIZE) fail("the bus trace is not whole 9-byte records", trace_path);
        board.trace_records = size / TRACE_RECORD_SIZE;
    }
    clock_gettime(CLOCK_MONOTONIC, &board.started);
    core_init(&core, &ops);
    return pty ? serve_pty() : serve(STDIN_FILENO, STDOUT_FILENO);
}
