/* save.c: --save DIR (save.h): what a run saves, the checks before any work, the arrays and run.json. */
#include "save.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "checked_math.h"
#include "host_tensor.h"

static int failures;

int save_failures(void) { return failures; }

SaveStorage save_storage(const char *dtype) {
    SaveStorage s = {NULL, 0, NULL};
    if (!strcmp(dtype, "fp32")) s.descr = "<f4", s.size = 4;
    else if (!strcmp(dtype, "fp16")) s.descr = "<f2", s.size = 2;
    else if (!strcmp(dtype, "bf16"))
        s.descr = "<u2", s.size = 2,
        s.note = "bf16 is saved as its raw 16 bits ('<u2'; NumPy has no bfloat16): as float32, "
                 "(a.astype(np.uint32) << 16).view(np.float32)";
    return s;
}

void save_shape_bhnd(const Options *o, long long shape[4]) {
    shape[0] = o->B, shape[1] = o->H, shape[2] = o->N, shape[3] = o->d;
}

void save_shape_bhn(const Options *o, long long shape[3]) { shape[0] = o->B, shape[1] = o->H, shape[2] = o->N; }

int save_inputs(const Options *o, const float *Q, const float *K, const float *V) {
    long long bhnd[4];
    save_shape_bhnd(o, bhnd);
    const char *dt = dtype_name(o->dtype);
    return save_array(o, "Q", dt, 4, bhnd, Q) & save_array(o, "K", dt, 4, bhnd, K) &
           save_array(o, "V", dt, 4, bhnd, V);
}

int save_attention(const Options *o, const float *Q, const float *K, const float *V, const float *O, const float *L) {
    long long bhnd[4], bhn[3];
    save_shape_bhnd(o, bhnd);
    save_shape_bhn(o, bhn);
    return save_inputs(o, Q, K, V) & save_array(o, "O", dtype_name(o->dtype), 4, bhnd, O) &
           save_array(o, "L", "fp32", 3, bhn, L);
}

/* ---- the plan ------------------------------------------------------------------------------------------ */

static void plan_add(SavePlan *p, const char *name, const char *dtype, int ndim, const long long *shape) {
    if (p->n == SAVE_MAX_ARRAYS) return;
    SaveArray *a = &p->a[p->n++];
    snprintf(a->name, sizeof(a->name), "%s", name);
    a->dtype = dtype;
    a->ndim = ndim;
    unsigned long long data = save_storage(dtype).size;
    for (int i = 0; i < ndim; i++) {
        a->shape[i] = shape[i];
        data = count_mul(data, (unsigned long long)shape[i]);
    }
    char header[4096];
    a->bytes = count_add(data, npy_header(header, sizeof(header), save_storage(dtype).descr, shape, ndim));
    p->bytes = count_add(p->bytes, a->bytes);
}

SavePlan save_plan(SaveKind kind, const Options *o, long long rows, const char *const *outputs, int noutputs) {
    SavePlan p;
    memset(&p, 0, sizeof(p));
    p.kind = kind;
    long long bhnd[4], bhn[3];
    save_shape_bhnd(o, bhnd);
    save_shape_bhn(o, bhn);
    const char *dt = dtype_name(o->dtype);
    if (kind == SAVE_ROWS) {
        const long long rn[2] = {rows, o->N};
        plan_add(&p, "x", dt, 2, rn);
        for (int k = 0; k < noutputs; k++) {
            char name[48];
            snprintf(name, sizeof(name), "y_%s", outputs[k]);
            plan_add(&p, name, dt, 2, rn);
        }
        return p;
    }
    const char *qkvo[4] = {"Q", "K", "V", "O"};
    for (int i = 0; i < 4; i++) plan_add(&p, qkvo[i], dt, 4, bhnd);
    if (kind == SAVE_ATTENTION || kind == SAVE_GRADIENTS) plan_add(&p, "L", "fp32", 3, bhn);
    if (kind == SAVE_ATTENTION) return p;
    if (kind == SAVE_GRADIENTS) {
        const char *grads[4] = {"dO", "dQ", "dK", "dV"};
        for (int i = 0; i < 4; i++) plan_add(&p, grads[i], dt, 4, bhnd);
        return p;
    }
    /* SAVE_STANDARD: S and P too, where all of it stays within the limit */
    const long long bhnn[4] = {o->B, o->H, o->N, o->N};
    SavePlan with = p;
    plan_add(&with, "S", dt, 4, bhnn);
    plan_add(&with, "P", dt, 4, bhnn);
    if (with.bytes <= o->save_max) return with;
    p.left_out_bytes = with.bytes - p.bytes;
    return p;
}

int save_plan_has(const SavePlan *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->a[i].name, name)) return 1;
    return 0;
}

/* ---- before any work ----------------------------------------------------------------------------------- */

/* mkdir -p: each missing component of dir, in turn. */
static int make_dirs(const char *dir) {
    char path[4096];
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return 0;
    }
    for (char *s = path + 1;; s++) {
        const char c = *s;
        if (c != '/' && c != '\0') continue;
        *s = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return 0;
        *s = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return 0;
    }
    return 1;
}

int save_prepare(const Options *o, const ChapterOption *declared, const SavePlan *plan) {
    char a[32], b[32], sizes[128];
    if (count_overflowed() || plan->bytes > o->save_max) {
        fprintf(stderr,
                "error: --save %s: this run would write %s bytes (%.2f GiB) of arrays, more than the limit of %s bytes "
                "(%.2f GiB); raise it with --save-max BYTES, or make the problem smaller (--batch, --heads, --seq%s)\n",
                o->save_dir, fmt_bytes(plan->bytes, a, sizeof(a)), plan->bytes / 1073741824.0,
                fmt_bytes(o->save_max, b, sizeof(b)), o->save_max / 1073741824.0,
                options_size_flags(declared, sizes, sizeof(sizes)));
        return 0;
    }
    if (!make_dirs(o->save_dir)) {
        fprintf(stderr, "error: --save %s: cannot create the directory: %s\n", o->save_dir, strerror(errno));
        return 0;
    }
    char probe[4200];
    snprintf(probe, sizeof(probe), "%s/.save-probe.%ld", o->save_dir, (long)getpid());
    FILE *f = fopen(probe, "wb");
    if (!f) {
        fprintf(stderr, "error: --save %s: cannot write into the directory: %s\n", o->save_dir, strerror(errno));
        return 0;
    }
    fclose(f);
    remove(probe);
    struct statvfs fs;
    if (statvfs(o->save_dir, &fs) == 0) {
        const unsigned long long avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
        if (plan->bytes > avail) {
            fprintf(stderr, "error: --save %s: this run would write %s bytes, but its file system has %s bytes free\n",
                    o->save_dir, fmt_bytes(plan->bytes, a, sizeof(a)), fmt_bytes(avail, b, sizeof(b)));
            return 0;
        }
    }
    return 1;
}

/* ---- the arrays ---------------------------------------------------------------------------------------- */

static int failed(SaveFile *s) {
    if (s->ok) failures++;
    s->ok = 0;
    return 0;
}

int save_open(SaveFile *s, const Options *o, const char *name, const char *dtype, int ndim, const long long *shape) {
    memset(s, 0, sizeof(*s));
    s->ok = 1;
    s->st = save_storage(dtype);
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.npy", o->save_dir, name);
    if (!s->st.descr) {
        fprintf(stderr, "error: cannot write the array file '%s': no NumPy type for %s\n", path, dtype);
        return failed(s);
    }
    return npy_open(&s->w, path, s->st.descr, s->st.size, shape, ndim) ? 1 : failed(s);
}

/* The storage bits of x: float32, IEEE half (round to nearest even), or bfloat16 (the same rounding of the top
 * 16 bits; NaN stays NaN). */
static uint32_t storage_bits(float x, size_t size, const char *descr) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if (size == 4) return u;
    return descr[1] == 'f' ? half_from_float(x) : bf16_from_float(x);
}

int save_floats(SaveFile *s, const float *x, size_t n) {
    if (!s->ok) return 0;
    unsigned char buf[1 << 16];
    const size_t e = s->st.size, per = sizeof(buf) / e;
    for (size_t at = 0; at < n; at += per) {
        const size_t m = n - at < per ? n - at : per;
        for (size_t i = 0; i < m; i++) {
            const uint32_t bits = storage_bits(x[at + i], e, s->st.descr);
            for (size_t k = 0; k < e; k++) buf[i * e + k] = (unsigned char)(bits >> (8 * k)); /* little-endian */
        }
        if (!npy_append(&s->w, buf, m * e)) return failed(s);
    }
    return 1;
}

int save_close(SaveFile *s) {
    if (!s->ok) return 0;
    return npy_close(&s->w) ? 1 : failed(s);
}

int save_array(const Options *o, const char *name, const char *dtype, int ndim, const long long *shape,
               const float *x) {
    SaveFile s;
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    if (!save_open(&s, o, name, dtype, ndim, shape)) return 0;
    if (!save_floats(&s, x, n)) return 0;
    return save_close(&s);
}

/* ---- run.json ------------------------------------------------------------------------------------------ */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fprintf(f, "null");
}

static void json_row(FILE *f, const char *kernel, const KernelRun *r) {
    fprintf(f, "    {\"kernel\": ");
    json_string(f, kernel);
    fprintf(f, ", \"time_ms_median\": ");
    if (r->have_time) json_number(f, r->time.median_ms);
    else fprintf(f, "null");
    fprintf(f, ", \"time_ms_min\": ");
    if (r->have_time) json_number(f, r->time.min_ms);
    else fprintf(f, "null");
    if (r->have_counted)
        fprintf(f, ", \"counted_read_bytes\": %llu, \"counted_write_bytes\": %llu", r->counted.read, r->counted.write);
    else fprintf(f, ", \"counted_read_bytes\": null, \"counted_write_bytes\": null");
    fprintf(f, ", \"rel_err\": ");
    if (r->have_check) json_number(f, r->err.rel);
    else fprintf(f, "null");
    fprintf(f, ", \"max_abs_err\": ");
    if (r->have_check) json_number(f, r->err.max_abs);
    else fprintf(f, "null");
    fprintf(f, ", \"check\": ");
    json_string(f, r->have_check ? (error_ok(&r->err, r->tol) ? "ok" : "FAILED") : "not checked");
    fprintf(f, "}");
}

int save_run_json(const SaveRunInfo *r) {
    const Options *o = r->opts;
    char path[4200];
    snprintf(path, sizeof(path), "%s/run.json", o->save_dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "error: cannot write '%s': %s\n", path, strerror(errno));
        failures++;
        return 0;
    }
    const int cpu = !strcmp(r->gpu, "cpu");
    const SaveStorage st = save_storage(dtype_name(o->dtype));
    fprintf(f, "{\n  \"chapter\": ");
    json_string(f, r->chapter);
    fprintf(f, ",\n  \"title\": ");
    json_string(f, r->title);
    fprintf(f, ",\n  \"kernels\": [");
    for (int k = 0; k < r->n; k++) {
        if (k) fprintf(f, ", ");
        json_string(f, r->m[k].kernel);
    }
    fprintf(f, "]");
    for (int i = 0; i < options_count(r->options); i++) {
        if (!(r->options[i].flags & OPTION_RECORDED)) continue;
        char buf[32];
        fprintf(f, ",\n  ");
        json_string(f, r->options[i].name);
        fprintf(f, ": ");
        json_string(f, o->chapter[i].given ? option_text(o, r->options, i, buf, sizeof(buf)) : "default");
    }
    fprintf(f, ",\n  \"gpu\": ");
    json_string(f, r->gpu);
    fprintf(f, ",\n  \"computed_on\": ");
    json_string(f, cpu ? "cpu" : "gpu");
    fprintf(f, ",\n  \"saved_outputs\": ");
    json_string(f, cpu ? "the CPU version's outputs (no GPU was used)"
                       : "what the GPU computed: the outputs of the checked forward pass, after the timed runs");
    fprintf(f, ",\n  \"dtype\": ");
    json_string(f, dtype_name(o->dtype));
    fprintf(f, ",\n  \"npy_descr\": ");
    json_string(f, st.descr);
    if (st.note) {
        fprintf(f, ",\n  \"dtype_note\": ");
        json_string(f, st.note);
    }
    fprintf(f, ",\n  \"B\": %d, \"H\": %d, \"N\": %d, \"d\": %d, \"rows\": %lld", o->B, o->H, o->N, o->d,
            options_rows(o, r->options));
    fprintf(f, ",\n  \"causal\": %s, \"scale\": ", o->causal ? "true" : "false");
    json_number(f, 1.0 / sqrt((double)o->d));
    fprintf(f, ", \"seed\": %llu", o->seed);
    fprintf(f, ",\n  \"options\": {\"br\": %d, \"bc\": %d", o->Br, o->Bc);
    for (int c = 0; c < REPORT_OPTION_COLUMN_COUNT; c++) {
        char buf[32];
        fprintf(f, ", \"%s\": \"%s\"", REPORT_OPTION_COLUMNS[c].column,
                report_option_column(r->options, o, c, buf, sizeof(buf)));
    }
    fprintf(f, ", \"reps\": %d, \"warmup\": %d, \"flush_l2\": %s, \"check\": %s, \"cpu\": %s, \"save_max\": %llu}",
            o->reps, o->warmup, o->no_flush ? "false" : "true",
            o->no_check ? "false" : "true", o->cpu ? "true" : "false", o->save_max);
    if (r->requested)
        fprintf(f, ",\n  \"requested\": {\"B\": %d, \"H\": %d, \"N\": %d, \"rows\": %lld, \"note\": \"the CPU version "
                   "ran a smaller size than asked for\"}",
                r->requested->B, r->requested->H, r->requested->N, options_rows(r->requested, r->options));
    fprintf(f, ",\n  \"files\": [\n");
    for (int i = 0; i < r->plan->n; i++) {
        const SaveArray *a = &r->plan->a[i];
        fprintf(f, "    {\"file\": \"%s.npy\", \"descr\": \"%s\", \"shape\": [", a->name, save_storage(a->dtype).descr);
        for (int k = 0; k < a->ndim; k++) fprintf(f, k ? ", %lld" : "%lld", a->shape[k]);
        fprintf(f, "]}%s\n", i + 1 < r->plan->n ? "," : "");
    }
    fprintf(f, "  ]");
    if (r->plan->left_out_bytes)
        fprintf(f, ",\n  \"left_out\": {\"files\": [\"S.npy\", \"P.npy\"], \"bytes\": %llu, \"why\": \"with them the "
                   "files would pass the limit (--save-max)\"}",
                r->plan->left_out_bytes);
    fprintf(f, ",\n  \"report\": [\n");
    for (int k = 0; k < r->n; k++) {
        json_row(f, r->m[k].kernel, &r->runs[k]);
        fprintf(f, "%s\n", k + 1 < r->n || r->total_label ? "," : "");
    }
    if (r->total_label) {
        const KernelRun t = report_total_run(r->m, r->runs, r->n);
        json_row(f, r->total_label, &t);
        fprintf(f, "\n");
    }
    fprintf(f, "  ]\n}\n");
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "error: cannot write '%s': %s\n", path, strerror(errno ? errno : EIO));
        failures++;
        return 0;
    }
    return 1;
}
