/*
 * ipu/runtime.h - the runtime C API: open an IPU device by name, load tile
 * images onto it, move tensors in and out, run, and read back cycle
 * counters and structured errors.
 *
 * Plain C, usable from C++; nothing in it depends on the toolchain's
 * internal headers. A device is an opaque handle; everything else is plain
 * structs and enums. Only the emulator backend ("sim:") exists now; the
 * same calls are meant to drive hardware later (docs/runtime.md).
 *
 * Conventions of every function that takes an `ipu_error *err`:
 *   - it returns IPU_ERR_NONE (0) on success and the error's kind on
 *     failure, and fills *err (kind, message, and the tile, context, pc,
 *     address and cycle where known); on success err->kind is
 *     IPU_ERR_NONE and err->msg is "";
 *   - err may be NULL when the caller only wants the return value;
 *   - bad arguments (NULL pointers, a tile out of range, a byte range
 *     outside tile memory, calls in the wrong order) give IPU_ERR_ARGUMENT
 *     with a message naming the function and the value; they never crash
 *     and never change the device;
 *   - buffers the caller passes are never modified unless they are
 *     outputs, and are not kept after the call returns (except the
 *     destination of ipu_stream_read, see there).
 * A device must be used by one thread at a time; distinct devices are
 * independent.
 */
#ifndef IPU_RUNTIME_H
#define IPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open device: the emulated chip (or, later, a hardware IPU). */
typedef struct ipu_device ipu_device;

typedef enum {
	IPU_ERR_NONE = 0,
	IPU_ERR_ARGUMENT,   /* bad argument or call out of order */
	IPU_ERR_IO,         /* a file could not be read or written */
	IPU_ERR_FORMAT,     /* the bytes are not a loadable image */
	IPU_ERR_NO_BACKEND, /* no such device: not built in, or no card (hw:N)
	                     */
	IPU_ERR_FAULT,      /* a tile's program raised an exception */
	IPU_ERR_EXCHANGE,   /* the exchange between tiles went wrong */
	IPU_ERR_DEADLOCK,   /* tiles wait for each other forever */
	IPU_ERR_TIMEOUT,    /* max_cycles reached before the program ended */
} ipu_error_kind;

/* A field of ipu_error that does not apply or is not known. */
#define IPU_UNKNOWN 0xffffffffu
#define IPU_UNKNOWN_CYCLE UINT64_MAX

typedef struct {
	ipu_error_kind kind;
	uint32_t tile; /* the tile concerned, or IPU_UNKNOWN */
	/* the instruction concerned: a fault's, the send of an exchange
	 * error, the sync of a deadlock, the next one at a timeout */
	int context;         /* 0 supervisor, 1..6 worker 0..5, -1 unknown */
	uint32_t pc;         /* of that instruction, or IPU_UNKNOWN */
	uint32_t address;    /* data or target address, or IPU_UNKNOWN */
	uint64_t cycle;      /* tile cycle of the error, or IPU_UNKNOWN_CYCLE */
	int fault_type;      /* IPU_ERR_FAULT: the $SSR/$WSR ETYPE, else 0 */
	char fault_name[24]; /* IPU_ERR_FAULT: "INVALID_ADDR", ..., else "" */
	/* One or more sentences: what, where, and for faults the words, their
	 * disassembly and the symbol the pc lies in. */
	char msg[768];
} ipu_error;

/* "argument", "io", "format", "no backend", "fault", "exchange",
 * "deadlock", "timeout"; "none" for IPU_ERR_NONE. A static string. */
const char *ipu_error_kind_name(ipu_error_kind kind);

/*
 * Open a device. `name` is "BACKEND:DEVICE[:OPTION]...":
 *   sim:c600, sim:gc200   the emulated chip (all 1472 tiles)
 *   :tiles=N              only tiles 0..N-1 (1..the chip's tiles); smaller
 *                         devices are cheaper for tests
 *   :threads=N            host threads that run tiles (1..64; default: the
 *                         online CPUs, at most 64); results do not depend
 *                         on it
 *   :trace                record a trace for ipu_write_trace
 *   model:c600            the register-level card model, driven as a card
 *                         is (docs/hardware.md): :tiles=N, :config=FILE
 *                         (a configuration capture to replay), :log=FILE
 *                         (every register access; a new file); host
 *                         streams over host pages, one host phase per
 *                         host sync up to the last a stream names
 *   hw:N                  a C600 card, /dev/ipuN of Graphcore's kernel
 *                         driver, by the same sequence as model:c600 and
 *                         its options; never run on a card yet
 *                         (docs/hardware.md); no cycles or counters (0),
 *                         no host streams (IPU_ERR_ARGUMENT)
 * Returns a new device, owned by the caller (free with ipu_close), or NULL
 * with *err filled (IPU_ERR_ARGUMENT for a malformed name, an unknown
 * chip or option; IPU_ERR_NO_BACKEND for a backend not built in, or a
 * card that is not there: no /dev/ipuN, the driver not loaded).
 */
ipu_device *ipu_open(const char *name, ipu_error *err);

/* Close a device and free everything it holds. NULL is allowed. */
void ipu_close(ipu_device *dev);

typedef struct {
	char backend[8];   /* "sim" */
	char chip[16];     /* "c600", "gc200" */
	uint32_t tiles;    /* usable tiles: ids 0..tiles-1 */
	uint32_t mem_base; /* tile memory: addresses mem_base..mem_end-1 */
	uint32_t mem_end;  /*   (the same on every tile) */
	uint32_t exec_end; /* code must lie below this address */
	double clock_hz;   /* tile clock, to turn cycles into time */
	int threads;       /* host threads (sim) */
	int trace;         /* 1 if opened with :trace */
} ipu_device_info;

/* Facts about an open device. IPU_ERR_ARGUMENT if dev or out is NULL. */
int ipu_info(const ipu_device *dev, ipu_device_info *out, ipu_error *err);

/*
 * Load a tile image onto tiles first_tile .. first_tile+ntiles-1 and start
 * each tile's supervisor at the image's entry (it runs at ipu_run; a `br
 * $lr` from the entry function returns to the host with $m0 as the tile's
 * exit status). `data` holds `len` bytes of an ELF image (ET_EXEC, as `ipu
 * link` writes) or a relocatable object (ET_REL, as `ipu asm` writes,
 * linked here with the default layout for the device's chip). The bytes
 * are copied; the caller keeps ownership of `data`.
 *
 * Several images may be loaded onto disjoint tile ranges before a run; a
 * tile may hold one image per run (IPU_ERR_ARGUMENT if it already holds
 * one). Loading after ipu_run resets the device first: every tile's memory,
 * state, counters, images and queued stream transfers are discarded.
 * Errors: IPU_ERR_FORMAT for bytes that are not a valid image or an image
 * that does not fit tile memory (nothing is loaded); IPU_ERR_ARGUMENT.
 */
int ipu_load_image(ipu_device *dev, const void *data, size_t len,
                   uint32_t first_tile, uint32_t ntiles, ipu_error *err);
/* The same from a file; IPU_ERR_IO if it cannot be read. */
int ipu_load_image_file(ipu_device *dev, const char *path, uint32_t first_tile,
                        uint32_t ntiles, ipu_error *err);

/*
 * Load a package (as the compiler writes it, docs/package.md) onto tiles
 * 0..n-1, where n is the number of tiles the package uses: every segment
 * is written and every tile's supervisor starts at its entry at ipu_run.
 * The bytes are checked in full first (IPU_ERR_FORMAT naming what is
 * wrong, nothing loaded); the package must be for the device's chip and
 * the device must have at least n tiles (IPU_ERR_ARGUMENT). Tiles 0..n-1
 * must be free, as for ipu_load_image; loading after ipu_run resets the
 * device first. The package's tensor table stays with the device for
 * ipu_write_tensor / ipu_read_tensor until the next load or ipu_close.
 * The bytes are copied.
 */
int ipu_load_package(ipu_device *dev, const void *data, size_t len,
                     ipu_error *err);
/* The same from a file; IPU_ERR_IO if it cannot be read. */
int ipu_load_package_file(ipu_device *dev, const char *path, ipu_error *err);

/* Element types of tensors (the graph's dtype numbers). f8 values carry a
 * power-of-two scale: a stored q means decode(q) * 2^scale. */
typedef enum {
	IPU_DTYPE_F32 = 0,     /* IEEE binary32, 4 bytes */
	IPU_DTYPE_F16 = 1,     /* IEEE binary16, 2 bytes */
	IPU_DTYPE_F8_F143 = 2, /* 1 sign, 4 exponent, 3 mantissa bits */
	IPU_DTYPE_F8_F152 = 3, /* 1 sign, 5 exponent, 2 mantissa bits */
} ipu_dtype;

typedef enum {
	IPU_ROLE_INPUT = 0,  /* set by the host before each run */
	IPU_ROLE_WEIGHT = 1, /* set by the host, constant over runs */
	IPU_ROLE_OUTPUT = 3, /* read by the host after a run */
} ipu_tensor_role;

/* A tensor of the loaded package: a rows x cols matrix (the graph tensor's
 * 2-D view: all axes but the last are folded into rows). */
typedef struct {
	const char *name; /* owned by the device: valid until the next load
	                     or ipu_close */
	ipu_dtype dtype;
	int scale; /* f8 only, else 0 */
	ipu_tensor_role role;
	uint32_t rows, cols;
	size_t bytes;    /* rows * cols * element size: the host array */
	uint32_t pieces; /* blocks it is split into across tiles */
} ipu_tensor_desc;

/* The tensor `name` of the loaded package. IPU_ERR_ARGUMENT naming it if
 * no package is loaded or it has no such tensor. */
int ipu_tensor_info(const ipu_device *dev, const char *name,
                    ipu_tensor_desc *out, ipu_error *err);
/* Listing: the number of tensors (0 without a package) and each by index
 * (0..count-1), in the package's order. */
uint32_t ipu_tensor_count(const ipu_device *dev);
int ipu_tensor_at(const ipu_device *dev, uint32_t index, ipu_tensor_desc *out,
                  ipu_error *err);

/*
 * Copy a whole tensor of the loaded package between a host array and the
 * tiles, now (outside a run, as ipu_write / ipu_read). The host array is
 * row-major, rows x cols elements of the tensor's dtype (raw f16 and f8
 * bit patterns; no conversion), and `bytes` must equal ipu_tensor_desc's
 * bytes. Each piece is converted to or from its on-tile layout; padding
 * is written as zeros. IPU_ERR_ARGUMENT for an unknown name (named in the
 * message), a size mismatch or NULL; the device is unchanged then.
 */
int ipu_write_tensor(ipu_device *dev, const char *name, const void *src,
                     size_t bytes, ipu_error *err);
int ipu_read_tensor(ipu_device *dev, const char *name, void *dst, size_t bytes,
                    ipu_error *err);

/*
 * Look up `name` in the symbol table of the image loaded on `tile`: *addr
 * gets its address, *size its size in bytes (from `.size`; 0 if the
 * source gave none). Either output may be NULL. IPU_ERR_ARGUMENT if the
 * tile holds no image or the image defines no such symbol.
 */
int ipu_symbol(const ipu_device *dev, uint32_t tile, const char *name,
               uint32_t *addr, uint32_t *size, ipu_error *err);

/*
 * Copy `len` bytes between host memory and tile memory at byte address
 * `addr`, now (outside a run: before ipu_run to set inputs, after it to
 * read results). The range must lie within tile memory (ipu_info's
 * mem_base..mem_end). len 0 does nothing. Tiles no image was loaded on
 * may be written and read too (they read as zero until written).
 */
int ipu_write(ipu_device *dev, uint32_t tile, uint32_t addr, const void *src,
              size_t len, ipu_error *err);
int ipu_read(ipu_device *dev, uint32_t tile, uint32_t addr, void *dst,
             size_t len, ipu_error *err);

/* The same at the address of a symbol (ipu_symbol): the tensor named `name`
 * on `tile`. When the symbol has a size, len must not exceed it. */
int ipu_write_symbol(ipu_device *dev, uint32_t tile, const char *name,
                     const void *src, size_t len, ipu_error *err);
int ipu_read_symbol(ipu_device *dev, uint32_t tile, const char *name, void *dst,
                    size_t len, ipu_error *err);

/*
 * Host transfers during a run. The program meets the host in syncs of
 * zones 5, 7, 13 and 15 (host syncs, counted from 0 in each run); a
 * transfer queued for host sync `sync` happens while every tile waits in
 * that sync, and its time is charged to the run (ipu_host_cycles).
 * Queue them after loading and before ipu_run.
 *   ipu_stream_write copies `src` now; it reaches the tile at that sync.
 *   ipu_stream_read fills `dst` at that sync, during ipu_run: `dst` must
 *   stay valid until ipu_run returns; if the run stops before that sync,
 *   dst is left untouched.
 */
int ipu_stream_write(ipu_device *dev, uint32_t sync, uint32_t tile,
                     uint32_t addr, const void *src, size_t len,
                     ipu_error *err);
int ipu_stream_read(ipu_device *dev, uint32_t sync, uint32_t tile,
                    uint32_t addr, void *dst, size_t len, ipu_error *err);

/*
 * Run the loaded program until every tile's supervisor has returned, or an
 * error stops it: IPU_ERR_FAULT (a tile's exception: tile, context, pc,
 * cycle, fault type, and the address when the exception concerns one),
 * IPU_ERR_EXCHANGE (an item sent at the wrong time or place: tile, cycle),
 * IPU_ERR_DEADLOCK (tiles wait in syncs that cannot complete: tile,
 * cycle), IPU_ERR_TIMEOUT (a tile reached max_cycles: tile, cycle).
 * max_cycles is per tile, counted from the start of the run; 0 means no
 * limit. A device runs once per load: IPU_ERR_ARGUMENT if nothing was
 * loaded since the last run. Memory and counters stay readable after any
 * outcome.
 */
int ipu_run(ipu_device *dev, uint64_t max_cycles, ipu_error *err);

/*
 * Progress of the next runs, for a display: ipu_run calls fn(ctx, cycles)
 * from its own thread, between the chip's rounds (at every sync of all
 * tiles), with the chip's clock so far (the latest tile's cycle). fn NULL:
 * no calls (the default). IPU_ERR_ARGUMENT for a NULL device.
 */
typedef void (*ipu_progress_fn)(void *ctx, uint64_t cycles);
int ipu_set_progress(ipu_device *dev, ipu_progress_fn fn, void *ctx,
                     ipu_error *err);

/* The program's length: the cycle at which the last tile finished, after a
 * run that completed; 0 before a run or after one that failed. */
uint64_t ipu_cycles(const ipu_device *dev);
/* Cycles the last run spent in host syncs and host transfers (included in
 * the tiles' cycles). 0 for a NULL device. */
uint64_t ipu_host_cycles(const ipu_device *dev);

typedef struct {
	uint64_t cycles;        /* the tile's clock: where it stopped */
	uint64_t bundles;       /* issues: bundles or solo instructions */
	uint64_t worker_issues; /* of those, issued by worker contexts */
	int loaded;             /* an image was loaded on this tile */
	int returned;           /* its supervisor returned to the host */
	uint32_t exit_status;   /* then its $m0, else 0 */
} ipu_counters;

/* Per-tile counters of the last run (all zero for an unused tile). */
int ipu_tile_counters(const ipu_device *dev, uint32_t tile, ipu_counters *out,
                      ipu_error *err);

/*
 * Write the trace of the last run (one track per tile: compute, sync,
 * send, host) as Chrome trace-event JSON, which Perfetto and
 * chrome://tracing open. Needs a device opened with ":trace"
 * (IPU_ERR_ARGUMENT otherwise); IPU_ERR_IO if the file cannot be written.
 */
int ipu_write_trace(ipu_device *dev, const char *path, ipu_error *err);

#ifdef __cplusplus
}
#endif

#endif
