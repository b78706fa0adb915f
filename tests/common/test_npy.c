/* npy.c and save.c without a chapter: the .npy header byte for byte as NumPy writes it, arrays read back, files
 * that are not what they claim rejected by the reader, the storage types, the plans and the checks before any
 * work. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../support.h"
#include "host_tensor.h"
#include "npy.h"
#include "save.h"

/* What np.save(f, np.zeros((2, 3), np.float32)) writes before the data (NumPy 1.x and 2.x). */
Test(npy, header_is_numpys_byte_for_byte) {
    char h[256];
    const long long shape[2] = {2, 3};
    const size_t n = npy_header(h, sizeof(h), "<f4", shape, 2);
    const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    cr_assert_eq(n, 128);
    cr_assert_eq(memcmp(h, "\x93NUMPY\x01\x00\x76\x00", 10), 0, "magic, version 1.0, HLEN 118 little-endian");
    cr_assert_eq(memcmp(h + 10, dict, sizeof(dict) - 1), 0, "%.*s", (int)(n - 10), h + 10);
    for (size_t i = 10 + sizeof(dict) - 1; i < n - 1; i++) cr_assert_eq(h[i], ' ', "padding at %zu", i);
    cr_assert_eq(h[n - 1], '\n');

    const long long one[1] = {5}, four[4] = {10, 64, 1024, 64};
    cr_assert_eq(npy_header(h, sizeof(h), "<f2", one, 1), 128);
    cr_assert(strstr(h + 10, "'shape': (5,), }"), "a 1-tuple keeps its comma: %s", h + 10);
    cr_assert_eq(npy_header(h, sizeof(h), "<f4", NULL, 0), 128);
    cr_assert(strstr(h + 10, "'shape': (), }"), "%s", h + 10);
    cr_assert_eq(npy_header(h, sizeof(h), "<f4", four, 4) % 64, 0);
    cr_assert(strstr(h + 10, "'shape': (10, 64, 1024, 64), }"), "%s", h + 10);
    cr_assert_eq(npy_header(h, 64, "<f4", four, 4), 0, "a buffer too small is refused");
}

static void write_file(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

Test(npy, written_in_pieces_and_read_back) {
    char dir[] = "/tmp/fa_npy.XXXXXX", path[64], err[256];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/a.npy", dir);
    const long long shape[3] = {2, 3, 5};
    float x[30];
    for (int i = 0; i < 30; i++) x[i] = (float)i * 0.25f - 3.f;
    NpyWriter w;
    cr_assert(npy_open(&w, path, "<f4", 4, shape, 3));
    cr_assert(npy_append(&w, x, 7 * 4));
    cr_assert(npy_append(&w, x + 7, 23 * 4));
    cr_assert(npy_close(&w));
    NpyArray a;
    cr_assert(npy_read(path, &a, err, sizeof(err)), "%s", err);
    cr_assert_str_eq(a.descr, "<f4");
    cr_assert_eq(a.ndim, 3);
    cr_assert(a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 5);
    cr_assert_eq(a.count, 30);
    cr_assert_eq(a.header_len, 128);
    cr_assert_eq(memcmp(a.data, x, sizeof(x)), 0); /* a little-endian host */
    npy_free(&a);

    /* the writer refuses more or less data than the shape holds */
    cr_assert(npy_open(&w, path, "<f4", 4, shape, 3));
    cr_assert(npy_append(&w, x, 29 * 4));
    cr_assert_not(npy_close(&w), "a short array must not close cleanly");
    cr_assert(npy_open(&w, path, "<f4", 4, shape, 3));
    cr_assert(npy_append(&w, x, sizeof(x)));
    cr_assert_not(npy_append(&w, x, 4), "a 31st element must be refused");

    /* the reader refuses a file cut short, one with extra bytes, a wrong magic, another version */
    unsigned char buf[512];
    char h[256];
    const size_t hn = npy_header(h, sizeof(h), "<f4", shape, 3);
    memcpy(buf, h, hn);
    memcpy(buf + hn, x, sizeof(x));
    write_file(path, buf, hn + sizeof(x) - 1);
    cr_assert_not(npy_read(path, &a, err, sizeof(err)));
    cr_assert(strstr(err, "shorter"), "%s", err);
    buf[hn + sizeof(x)] = 0;
    write_file(path, buf, hn + sizeof(x) + 1);
    cr_assert_not(npy_read(path, &a, err, sizeof(err)));
    cr_assert(strstr(err, "longer"), "%s", err);
    buf[1] = 'X';
    write_file(path, buf, hn + sizeof(x));
    cr_assert_not(npy_read(path, &a, err, sizeof(err)));
    cr_assert(strstr(err, "magic"), "%s", err);
    buf[1] = 'N', buf[6] = 2;
    write_file(path, buf, hn + sizeof(x));
    cr_assert_not(npy_read(path, &a, err, sizeof(err)));
    cr_assert(strstr(err, "version 2.0"), "%s", err);
    unlink(path);
    rmdir(dir);
}

Test(save, storage_types_as_numpy_names_them) {
    cr_assert_str_eq(save_storage("fp32").descr, "<f4");
    cr_assert_eq(save_storage("fp32").size, 4);
    cr_assert_null(save_storage("fp32").note);
    cr_assert_str_eq(save_storage("fp16").descr, "<f2");
    cr_assert_eq(save_storage("fp16").size, 2);
    cr_assert_str_eq(save_storage("bf16").descr, "<u2");
    cr_assert(save_storage("bf16").note && strstr(save_storage("bf16").note, "raw"));
    cr_assert_null(save_storage("int8").descr);
}

/* Values converted to the storage type on the way out, little-endian: fp16 as half_from_float rounds, bf16 as the
 * top 16 bits rounded to nearest even. */
Test(save, elements_in_the_storage_type) {
    char dir[] = "/tmp/fa_save.XXXXXX", err[256], path[64];
    cr_assert(mkdtemp(dir));
    Options o;
    options_defaults(&o);
    o.save_dir = dir;
    const float x[4] = {1.0f, -2.5f, 1.00048828125f /* 1 + 2^-11: a tie */, 65504.f};
    const long long shape[1] = {4};
    const char *types[3] = {"fp32", "fp16", "bf16"};
    for (int t = 0; t < 3; t++) {
        cr_assert(save_array(&o, types[t], types[t], 1, shape, x));
        snprintf(path, sizeof(path), "%s/%s.npy", dir, types[t]);
        NpyArray a;
        cr_assert(npy_read(path, &a, err, sizeof(err)), "%s", err);
        cr_assert_str_eq(a.descr, save_storage(types[t]).descr);
        const unsigned char *b = a.data;
        for (int i = 0; i < 4; i++) {
            uint32_t u;
            memcpy(&u, &x[i], 4);
            const uint32_t want = t == 0 ? u : t == 1 ? half_from_float(x[i]) : (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
            uint32_t got = 0;
            for (size_t k = 0; k < a.elem_size; k++) got |= (uint32_t)b[i * a.elem_size + k] << (8 * k);
            cr_assert_eq(got, want, "%s element %d: %x, expected %x", types[t], i, got, want);
        }
        npy_free(&a);
        unlink(path);
    }
    cr_assert_eq(save_failures(), 0);
    rmdir(dir);
}

Test(save, plans_of_the_three_kinds) {
    Options o = shape_options(2, 3, 33, 64);
    const SavePlan a = save_plan(SAVE_ATTENTION, &o, 0, NULL, 0);
    cr_assert_eq(a.n, 5);
    cr_assert_str_eq(a.a[4].name, "L");
    cr_assert(a.a[4].ndim == 3 && a.a[4].shape[2] == 33);
    cr_assert_eq(a.bytes, 4 * (128 + 4ull * 2 * 3 * 33 * 64) + 128 + 4ull * 2 * 3 * 33);
    const SavePlan s = save_plan(SAVE_STANDARD, &o, 0, NULL, 0);
    cr_assert(s.n == 6 && save_plan_has(&s, "S") && save_plan_has(&s, "P") && !save_plan_has(&s, "L"));
    cr_assert(s.a[4].ndim == 4 && s.a[4].shape[2] == 33 && s.a[4].shape[3] == 33);
    o.dtype = DTYPE_FP16;
    cr_assert_eq(save_plan(SAVE_STANDARD, &o, 0, NULL, 0).bytes, 6 * 128 + 2 * (4ull * 6 * 33 * 64 + 2ull * 6 * 33 * 33));
    o.dtype = DTYPE_FP32;
    const char *names[2] = {"one", "two"};
    const SavePlan r = save_plan(SAVE_ROWS, &o, 7, names, 2);
    cr_assert(r.n == 3 && save_plan_has(&r, "x") && save_plan_has(&r, "y_one") && save_plan_has(&r, "y_two"));
    cr_assert(r.a[0].ndim == 2 && r.a[0].shape[0] == 7 && r.a[0].shape[1] == 33);
}

/* save_prepare: within the limit, a missing directory is created with its parents; over the limit nothing is
 * created; a directory under a file is refused. */
Test(save, prepare_creates_or_refuses) {
    char dir[] = "/tmp/fa_save.XXXXXX", sub[128], file[128];
    cr_assert(mkdtemp(dir));
    Options o = shape_options(1, 1, 16, 32);
    const SavePlan p = save_plan(SAVE_ATTENTION, &o, 0, NULL, 0);
    snprintf(sub, sizeof(sub), "%s/a/b", dir);
    o.save_dir = sub;
    o.save_max = p.bytes - 1;
    cr_assert_not(save_prepare(&o, NULL, &p));
    cr_assert(access(sub, F_OK) != 0, "a refused plan creates nothing");
    o.save_max = p.bytes;
    cr_assert(save_prepare(&o, NULL, &p));
    struct stat st;
    cr_assert(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(file, sizeof(file), "%s/f", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fclose(f);
    o.save_dir = file;
    cr_assert_not(save_prepare(&o, NULL, &p));
    char cmd[256], out[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    run_command(cmd, out, sizeof(out));
}
