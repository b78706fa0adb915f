/* Tests of common/scripts/provenance.py: the machine-code digests, the record of a run, and the check that the
 * committed results still describe the code of this tree (`make digest-check`). No GPU needed; the digests need
 * cuobjdump and nvdisasm (make test installs them, common/scripts/ensure-deps.sh): without them the tests that
 * digest skip and say why. Run from the repository root after `make` (the chapter programs). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"

/* the sanitized pass skips these (tooling_suite_init, support.h) */
TestSuite(provenance, .init = tooling_suite_init);

#define PROVENANCE "python3 common/scripts/provenance.py"
#define COMMITTED "results/NVIDIA_H200"

/* Runs a bash script with $T a fresh folder (removed afterwards); returns its exit status, stdout and stderr
 * into out. */
static int bash_script(const char *script, char *out, size_t len) {
    char path[] = "/tmp/test_provenance.XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp failed");
    FILE *f = fdopen(fd, "w");
    cr_assert(f != NULL);
    fputs("set -u\nT=$(mktemp -d /tmp/test_provenance_dir.XXXXXX); trap 'rm -rf \"$T\"' EXIT\n", f);
    fputs(script, f);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "bash %s 2>&1", path);
    const int status = run_command(cmd, out, len);
    remove(path);
    return status;
}

/* The tests that digest machine code skip, saying why, where cuobjdump and nvdisasm are not to be had. */
static void need_tools(void) {
    char out[2048];
    if (run_command(PROVENANCE " tools 2>&1", out, sizeof out) != 0)
        cr_skip_test("cuobjdump and nvdisasm are not installed here, and could not be: %s", out);
}

/* The committed record is of sm_90 code: a build for other architectures only (make ARCH=80) cannot be
 * compared with it, and the tests that compare skip, saying so. */
static void need_sm90_build(void) {
    need_tools();
    char out[4096];
    if (run_command(PROVENANCE " digest ch00/run 2>&1 >/dev/null", out, sizeof out) != 0 &&
        strstr(out, "holds no sm_90 code") != NULL)
        cr_skip_test("this build has no sm_90 code to compare with the committed record: %s", out);
}

Test(provenance, committed_results_describe_the_code_of_this_tree) {
    need_sm90_build();
    char out[16384];
    const int status = run_command(PROVENANCE " check " COMMITTED " 2>&1", out, sizeof out);
    cr_assert_eq(status, 0, "kernels changed since " COMMITTED " was measured (make digest-check):\n%s", out);
    cr_assert(strstr(out, " 0 stale;") != NULL, "%s", out);
}

/* A script's lines writing $T/provenance.json: the committed record with every digest of chapter 03's program
 * altered (its rows stale) */
#define CH03_CHANGED                                                                                                  \
    "python3 - $T/provenance.json <<'EOF'\n"                                                                           \
    "import json, sys\n"                                                                                               \
    "r = json.load(open('" COMMITTED "/provenance.json'))\n"                                                          \
    "for k in r['kernels']:\n"                                                                                         \
    "    if k['program'] == 'ch03/run': k['digest'] = '0' * 16\n"                                                      \
    "json.dump(r, open(sys.argv[1], 'w'))\n"                                                                           \
    "EOF\n"

Test(provenance, a_changed_kernel_names_its_rows) {
    need_sm90_build();
    char out[16384];
    /* the record with chapter 03's code changed, and two chapters' rows */
    const int status = bash_script(
        "mkdir -p $T/ch01 $T/ch03\n"
        "cp " COMMITTED "/ch01/run.csv $T/ch01/ && cp " COMMITTED "/ch03/run.csv $T/ch03/\n" CH03_CHANGED PROVENANCE
        " check $T\n",
        out, sizeof out);
    cr_assert_eq(status, 1, "a changed kernel must fail the check:\n%s", out);
    cr_assert(strstr(out, "stale: chapter 03 flash_v2 (ch03/run.csv): kernel changed since measured: "
                          "void flash_v2_kernel<") != NULL,
              "%s", out);
    cr_assert(strstr(out, "chapter 01") == NULL, "chapter 01's kernels did not change:\n%s", out);
    cr_assert(strstr(out, "4 measured labels") != NULL, "%s", out);
}

/* Which runs a row stands on: the folder's record, its chapter's chNN/provenance.json, or the record of the stage
 * that wrote its CSV (chNN/NAME.provenance.json for NAME.csv and NAME_*.csv). The record of a stage that timed
 * nothing (chNN/tests_gpu.provenance.json) or of another chapter holds today's code and vouches for no row. */
Test(provenance, a_row_stands_on_the_runs_that_wrote_its_file) {
    need_sm90_build();
    char out[16384], script[2048];
    /* the folder's record with chapter 03's digests altered (its rows stale), then one more record beside them */
    const char *setup = "mkdir -p $T/ch01 $T/ch03 && cp " COMMITTED "/ch03/run.csv $T/ch03/\n" CH03_CHANGED;
    const struct {
        const char *record; /* a record of the code of this tree (the committed one), copied there */
        int status;         /* 0: the rows stand; 1: stale */
    } cases[] = {
        {"ch03/tests_gpu.provenance.json", 1},
        {"ch01/provenance.json", 1},
        {"ch03/tiles.provenance.json", 1},
        {"ch03/run.provenance.json", 0},
        {"ch03/run_x.provenance.json", 1},
        {"ch03/provenance.json", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(script, sizeof script, "%scp " COMMITTED "/provenance.json $T/%s\n" PROVENANCE " check $T\n",
                 setup, cases[i].record);
        cr_assert_eq(bash_script(script, out, sizeof out), cases[i].status, "with %s:\n%s", cases[i].record, out);
        cr_assert(cases[i].status == 0 || strstr(out, "stale: chapter 03 flash_v2 (ch03/run.csv)") != NULL,
                  "with %s:\n%s", cases[i].record, out);
    }
}

/* A record that names its files (a stage run on its own: provenance.py record --files) vouches for those alone,
 * whatever its own name: the NAME.csv, NAME_*.csv rule is for records that name none. */
Test(provenance, a_record_that_names_its_files_vouches_for_those_alone) {
    need_sm90_build();
    char out[16384], script[2048];
    const char *setup = "mkdir -p $T/ch01 $T/ch03 && cp " COMMITTED "/ch03/run.csv $T/ch03/\n" CH03_CHANGED;
    const struct {
        const char *record, *files; /* a record of the code of this tree, there, naming these files */
        int status;                 /* 0: ch03/run.csv stands; 1: stale; 2: a malformed record */
    } cases[] = {
        {"ch03/sweep.provenance.json", "['run.csv']", 0},
        {"ch03/sweep.provenance.json", "['tiles.csv', 'run.csv']", 0},
        {"ch03/run.provenance.json", "['tiles.csv']", 1},
        {"ch03/provenance.json", "['run_x.csv']", 1},
        {"ch01/provenance.json", "['run.csv']", 1},
        {"ch03/sweep.provenance.json", "[]", 2},
        {"ch03/sweep.provenance.json", "'run.csv'", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(script, sizeof script,
                 "%spython3 - $T/%s <<'EOF'\n"
                 "import json, sys\n"
                 "r = json.load(open('" COMMITTED "/provenance.json'))\n"
                 "r['files'] = %s\n"
                 "json.dump(r, open(sys.argv[1], 'w'))\n"
                 "EOF\n" PROVENANCE " check $T\n",
                 setup, cases[i].record, cases[i].files);
        cr_assert_eq(bash_script(script, out, sizeof out), cases[i].status, "%s naming %s:\n%s", cases[i].record,
                     cases[i].files, out);
    }
}

/* A kernel added after a run (no record names it) made none of its rows: a label whose regex also matches it (a
 * total row over every step of a chapter) still stands, and the new kernel is listed as not measured; a label none
 * of whose kernels a record names is stale. A record of this tree's code (provenance.py record: the digests of this
 * build, whatever the committed results' records say) without its tc_bwd kernels stands for that. */
Test(provenance, a_kernel_added_since_is_not_a_change) {
    need_sm90_build();
    char out[16384];
    const char *setup = "mkdir -p $T/ch07 && cp " COMMITTED "/provenance.json $T/\n"
                        PROVENANCE " record $T/this_tree.json >/dev/null\n"
                        "python3 - $T/ch07/provenance.json $T/this_tree.json <<'EOF'\n"
                        "import json, sys\n"
                        "r = json.load(open(sys.argv[2]))\n"
                        "added = lambda k: k['function'].startswith('void tc_bwd_kernel<')\n"
                        "r['kernels'] = [k for k in r['kernels'] if not added(k)]\n"
                        "json.dump(r, open(sys.argv[1], 'w'))\n"
                        "EOF\n";
    char script[2048];
    snprintf(script, sizeof script, "%sprintf 'chapter,kernel\\n07,backward\\n' > $T/ch07/x.csv\n" PROVENANCE
             " check $T\n", setup);
    cr_assert_eq(bash_script(script, out, sizeof out), 0, "the total row stands on the kernels it measured:\n%s", out);
    cr_assert(strstr(out, "1 measured labels in") != NULL && strstr(out, " 0 stale;") != NULL, "%s", out);
    cr_assert(strstr(out, "tc_bwd_kernel") != NULL, "the added kernel is listed as not measured:\n%s", out);
    snprintf(script, sizeof script, "%sprintf 'chapter,kernel\\n07,tc_bwd\\n' > $T/ch07/x.csv\n" PROVENANCE
             " check $T\n", setup);
    cr_assert_eq(bash_script(script, out, sizeof out), 1, "no kernel of tc_bwd is in a record:\n%s", out);
    cr_assert(strstr(out, "stale: chapter 07 tc_bwd (ch07/x.csv): kernel changed since measured: void tc_bwd_kernel<")
                  != NULL,
              "%s", out);
}

/* A total row (chapter 07's backward: its regex matches every step's kernels) stands on the kernels of the rows
 * beside it in its CSV, the step it totals: with step 10's code changed since a record of this tree, a run of step 2
 * still stands, a run of step 10 does not, and a total alone (no rows beside it to say which step) stands on every
 * kernel it matches. */
Test(provenance, a_total_row_stands_on_the_kernels_it_totals) {
    need_sm90_build();
    char out[16384], script[2048];
    const char *setup = "mkdir -p $T/ch07 && cp " COMMITTED "/provenance.json $T/\n"
                        PROVENANCE " record $T/this_tree.json >/dev/null\n"
                        "python3 - $T/ch07/provenance.json $T/this_tree.json <<'EOF'\n"
                        "import json, sys\n"
                        "r = json.load(open(sys.argv[2]))\n"
                        "for k in r['kernels']:\n"
                        "    if k['function'].startswith('void tc_ws_bwd_kernel<'): k['digest'] = '0' * 16\n"
                        "json.dump(r, open(sys.argv[1], 'w'))\n"
                        "EOF\n";
    const struct {
        const char *rows; /* the CSV's rows after its header */
        int status;       /* 0: the rows stand; 1: stale */
        const char *stale; /* the labels reported stale, or NULL */
    } cases[] = {
        {"07,flash_bwd_d\\n07,flash_bwd\\n07,backward\\n", 0, NULL},
        {"07,tc_bwd_d\\n07,tc_ws_bwd\\n07,backward\\n", 1, "stale: chapter 07 backward (ch07/x.csv)"},
        {"07,backward\\n", 1, "stale: chapter 07 backward (ch07/x.csv)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(script, sizeof script, "%sprintf 'chapter,kernel\\n%s' > $T/ch07/x.csv\n" PROVENANCE " check $T\n",
                 setup, cases[i].rows);
        cr_assert_eq(bash_script(script, out, sizeof out), cases[i].status, "rows %s:\n%s", cases[i].rows, out);
        cr_assert(cases[i].stale == NULL || strstr(out, cases[i].stale) != NULL, "rows %s:\n%s", cases[i].rows, out);
    }
}

Test(provenance, a_row_no_kernels_txt_names_is_an_error) {
    need_sm90_build();
    char out[8192];
    const int status = bash_script("mkdir -p $T/ch03 && cp " COMMITTED "/provenance.json $T/\n"
                                   "printf 'chapter,kernel\\n03,flash_v9\\n' > $T/ch03/x.csv\n"
                                   PROVENANCE " check $T\n",
                                   out, sizeof out);
    cr_assert_eq(status, 2, "%s", out);
    cr_assert(strstr(out, "ch03/x.csv has rows of chapter 03's flash_v9, and no 03_*/kernels.txt line") != NULL,
              "%s", out);
}

/* A record that cannot be read is bad input (exit 2, a message naming the file), found before any digest. */
Test(provenance, a_missing_or_malformed_record_is_an_error) {
    static const struct {
        const char *content, *says;
    } cases[] = {
        {NULL, "provenance.json: cannot read the record"},
        {"{\"arch\": \"sm_90\", \"kernels\": [", "provenance.json: not JSON"},
        {"{\"kernels\": []}", "or no list of"},
        {"{\"arch\": \"sm_90\", \"kernels\": []}", "provenance.json: no kernels recorded"},
        {"{\"arch\": \"sm_90\", \"kernels\": [{\"program\": \"ch03/run\", \"digest\": \"xyz\"}]}",
         "provenance.json: kernel 1 is not {program, build, function, name, digest, instructions}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char script[1024], out[8192];
        snprintf(script, sizeof script, "mkdir -p $T/ch03 && cp " COMMITTED "/ch03/run.csv $T/ch03/\n%s%s%s" PROVENANCE
                 " check $T\n",
                 cases[i].content ? "cat > $T/provenance.json <<'EOF'\n" : "",
                 cases[i].content ? cases[i].content : "", cases[i].content ? "\nEOF\n" : "");
        const int status = bash_script(script, out, sizeof out);
        cr_expect_eq(status, 2, "case %zu: exit %d:\n%s", i, status, out);
        cr_expect(strstr(out, cases[i].says) != NULL, "case %zu: no \"%s\" in:\n%s", i, cases[i].says, out);
    }
}

/* Two kernels with the same body and different names have one digest; a different body, another. */
Test(provenance, the_digest_is_the_code_not_the_name) {
    need_tools();
    char out[8192];
    const int status = bash_script(
        "cat > $T/k.cu <<'EOF'\n"
        "__global__ void first_name(float *p) { p[threadIdx.x] = 1.0f; }\n"
        "__global__ void second_name(float *p) { p[threadIdx.x] = 1.0f; }\n"
        "__global__ void other_code(float *p) { p[threadIdx.x] = 2.0f; }\n"
        "EOF\n"
        "${NVCC:-${CUDA:-/usr/local/cuda}/bin/nvcc} -gencode arch=compute_90,code=sm_90 -c $T/k.cu -o $T/k.o || exit 9\n"
        PROVENANCE " digest $T/k.o > $T/d || exit 8\n"
        "cat $T/d\n"
        "d() { awk -v n=\"$1\" 'index($3, \":timed:\" n \"(\") { print $1 }' $T/d; }\n"
        "[ -n \"$(d first_name)\" ] && [ \"$(d first_name)\" = \"$(d second_name)\" ] || echo 'SAME CODE, OTHER DIGEST'\n"
        "[ \"$(d first_name)\" != \"$(d other_code)\" ] || echo 'OTHER CODE, SAME DIGEST'\n",
        out, sizeof out);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert(strstr(out, "SAME CODE") == NULL && strstr(out, "OTHER CODE") == NULL, "%s", out);
}

/* The record of a run: every field there, the GPU's from nvidia-smi or saying there is none; never a guess. */
Test(provenance, a_record_holds_every_field) {
    char out[16384];
    const int status = bash_script(
        PROVENANCE " record $T/p.json || exit 9\n"
        "python3 - $T/p.json <<'EOF'\n"
        "import json, re, sys\n"
        "r = json.load(open(sys.argv[1]))\n"
        "for k in ['commit', 'tree_clean', 'date_utc', 'gpu', 'clocks', 'nvcc', 'driver', 'ncu', 'torch', 'arch',\n"
        "          'digests_from', 'kernels']:\n"
        "    if k not in r: print('MISSING', k)\n"
        "    elif r[k] in ('', None, '?'): print('EMPTY', k)\n"
        "if not re.fullmatch(r'\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ', r.get('date_utc', '')): print('DATE', r.get('date_utc'))\n"
        "if not re.fullmatch(r'sm_\\d+', r.get('arch', '')): print('ARCH', r.get('arch'))\n"
        "if not isinstance(r.get('tree_clean'), bool): print('TREE', r.get('tree_clean'))\n"
        "k = r.get('kernels')\n"
        "if isinstance(k, list): print('kernels:', len(k), sorted({x['program'] for x in k}))\n"
        "else: print('kernels:', k)\n"
        "EOF\n",
        out, sizeof out);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert(strstr(out, "MISSING") == NULL && strstr(out, "EMPTY") == NULL && strstr(out, "DATE") == NULL &&
                  strstr(out, "ARCH") == NULL && strstr(out, "TREE") == NULL,
              "%s", out);
    char tools[2048];
    if (run_command(PROVENANCE " tools 2>&1", tools, sizeof tools) == 0)
        cr_assert(strstr(out, "'ch00/run'") != NULL || strstr(out, "kernels: not recorded: ch00/run holds no sm_") != NULL,
                  "no digests of the chapter programs:\n%s", out);
    else
        cr_assert(strstr(out, "kernels: not recorded: no cuobjdump") != NULL, "%s", out);
}
