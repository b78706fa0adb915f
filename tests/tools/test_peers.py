"""Unit tests of common/scripts/peers.py without PyTorch (Python's unittest, run by tests/tools/check.py): the
command line and its validation, the shapes, the FLOP counts of both passes, and the CSV rows the forward and
the backward mode (--backward) write. Nothing here imports PyTorch or needs a GPU: the timing itself is
measured on the GPU machine by the benches."""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # nothing written into the tree (common/scripts/__pycache__)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "scripts"))

import peers  # noqa: E402

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def run(argv):
    """peers.main(argv): (exit status, stdout, stderr); argparse's errors exit through SystemExit."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = peers.main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def article(dtype="fp32", causal=False, reps=20, names=None):
    return peers.Shape(10, 64, 1024, 64, dtype, causal, reps, names or list(peers.PEERS))


class CommandLine(unittest.TestCase):
    def test_list_needs_no_pytorch_and_names_the_backward_mode_in_a_comment(self):
        rc, out, _ = run(["--list", "--backward", "--shape", "1,16,16384,128,bf16,1,5,sdpa_flash+sdpa_cudnn"])
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[0].startswith("# backward: rows PEER_bwd"), lines[0])
        self.assertEqual(lines[1], "1 16 16384 128 bf16 1 5 sdpa_flash,sdpa_cudnn")

    def test_forward_list_unchanged(self):
        rc, out, _ = run(["--list", "--causal", "--dtype", "fp16", "--peers", "sdpa_flash,torch_3op"])
        self.assertEqual((rc, out), (0, "10 64 1024 64 fp16 1 20 sdpa_flash,torch_3op\n"))

    def test_the_backward_list_is_a_valid_shapes_file(self):
        rc, out, _ = run(["--list", "--backward", "--shape", "2,3,77,64,fp32,causal", "--shape", "1,2,33,128,bf16,0,3"])
        self.assertEqual(rc, 0)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(out)
        try:
            rc2, out2, _ = run(["--list", "--backward", "--shapes", f.name])
        finally:
            os.unlink(f.name)
        self.assertEqual((rc2, out2), (0, out))

    def test_bad_input_exits_2_with_a_message_without_pytorch(self):
        for argv, words in (
                (["--backward", "--peers", "sdpa_flash_bwd"], "unknown peer(s) sdpa_flash_bwd"),
                (["--backward", "--dtype", "fp8"], "invalid choice"),
                (["--backward", "--reps", "0"], "--reps must be >= 1"),
                (["--backward", "--shape", "1,2,3"], "expected 'B H N d dtype causal"),
                (["--backward", "--shape", "1,2,0,64,fp32,0"], "must be >= 1"),
                (["--backward", "--shape", "1,2,64,64,fp32,maybe"], "causal must be"),
                (["--backward", "--shapes", "/nonexistent/shapes.txt"], "No such file")):
            rc, out, err = run(argv)
            self.assertEqual(rc, 2, argv)
            self.assertIn(words, err, argv)
            self.assertEqual(out, "", argv)

    @unittest.skipIf(HAVE_TORCH, "PyTorch is installed here: main() would time on the GPU")
    def test_without_pytorch_it_says_so_and_exits_0(self):
        for mode in ([], ["--backward"]):
            rc, out, _ = run(mode + ["--shape", "1,2,64,64,fp32,0,1"])
            self.assertEqual(rc, 0)
            self.assertIn("PyTorch is not installed", out)


class Shapes(unittest.TestCase):
    def test_a_shape_line_and_its_defaults(self):
        s = peers.parse_shape("16 16 1024 128 bf16 causal".split(), "here", 10, ["sdpa_flash"])
        self.assertEqual((s.B, s.H, s.N, s.d, s.dtype, s.causal, s.reps, s.peers),
                         (16, 16, 1024, 128, "bf16", True, 10, ["sdpa_flash"]))
        s = peers.parse_shape("1 16 16384 64 fp32 0 5 sdpa_efficient,sdpa_math".split(), "here", 10, ["x"])
        self.assertEqual((s.causal, s.reps, s.peers), (False, 5, ["sdpa_efficient", "sdpa_math"]))
        self.assertEqual(s.label(), "B=1 H=16 N=16384 d=64 fp32 full")

    def test_every_peer_has_a_backward_row_name(self):
        self.assertEqual([peers.row_name(p, True) for p in peers.PEERS],
                         ["torch_3op_bwd", "sdpa_efficient_bwd", "sdpa_flash_bwd", "sdpa_cudnn_bwd", "sdpa_math_bwd"])
        self.assertEqual([peers.row_name(p) for p in peers.PEERS], peers.PEERS)
        # a backward row's name is never a peer the forward mode writes
        self.assertFalse(set(peers.row_name(p, True) for p in peers.PEERS) & set(peers.PEERS))


class Flops(unittest.TestCase):
    def test_forward_is_4_BHN2d_and_backward_10_halved_causal(self):
        self.assertEqual(peers.flops(article()), 171798691840.0)  # chapter 07's --model: the forward's
        self.assertEqual(peers.flops(article(), backward=True), 429496729600.0)  # and 10 B H N^2 d
        self.assertEqual(peers.flops(article(causal=True), backward=True), 214748364800.0)
        s = peers.Shape(1, 16, 16384, 128, "bf16", False, 5, [])
        self.assertEqual(peers.flops(s, backward=True), 10.0 * 16 * 16384 ** 2 * 128)
        self.assertEqual(peers.flops(s, backward=True) / peers.flops(s), 2.5)


class Rows(unittest.TestCase):
    def fields(self, row):
        self.assertTrue(row.endswith("\n"))
        return dict(zip(peers.HEADER.strip().split(","), row.strip().split(",")))

    def test_header_unchanged(self):
        self.assertEqual(peers.HEADER,
                         "peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min,tflops,rel_err_vs_3op\n")

    def test_forward_row_as_before(self):
        row = peers.csv_row("sdpa_flash", "NVIDIA H200", "2.11.0+cu130", article("fp16"), 0.6586, 0.5895, 8.4e-4)
        self.assertEqual(row,
                         "sdpa_flash,NVIDIA H200,2.11.0+cu130,10,64,1024,64,fp16,0,0.6586,0.5895,260.85,8.40e-04\n")

    def test_backward_row(self):
        row = peers.csv_row("sdpa_efficient", "NVIDIA H200", "2.11.0+cu130", article(causal=True), 20.0, 19.51234,
                            3.25e-7, backward=True)
        f = self.fields(row)
        self.assertEqual(len(row.strip().split(",")), len(peers.HEADER.strip().split(",")))
        self.assertEqual(f["peer"], "sdpa_efficient_bwd")
        self.assertEqual([f[c] for c in ("B", "H", "N", "d", "dtype", "causal")], ["10", "64", "1024", "64", "fp32", "1"])
        self.assertEqual((f["time_ms_median"], f["time_ms_min"]), ("20.0000", "19.5123"))
        self.assertEqual(f["tflops"], "10.74")  # 214,748,364,800 FLOPs in 20 ms
        self.assertEqual(f["rel_err_vs_3op"], "3.25e-07")

    def test_a_reference_not_computed_is_nan_in_both_modes(self):
        for backward in (False, True):
            row = peers.csv_row("torch_3op", "g", "t", article(), 1.0, 1.0, float("nan"), backward=backward)
            self.assertEqual(self.fields(row)["rel_err_vs_3op"], "nan")


if __name__ == "__main__":
    unittest.main()
