/* io_bytes.h: byte counts moved between a kernel and global memory (HBM), as plain integers. */
#ifndef FA_IO_BYTES_H
#define FA_IO_BYTES_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    unsigned long long read;  /* bytes loaded from global memory  */
    unsigned long long write; /* bytes stored to global memory    */
} IoBytes;

static inline IoBytes io_bytes(unsigned long long read, unsigned long long write) {
    IoBytes b = {read, write};
    return b;
}
static inline IoBytes io_add(IoBytes a, IoBytes b) { return io_bytes(a.read + b.read, a.write + b.write); }
static inline unsigned long long io_total(IoBytes b) { return b.read + b.write; }

#ifdef __cplusplus
}
#endif
#endif
