#!/bin/sh
# profile.sh CH [options] | profile.sh --from REPORT_CSV NCU_CSV: `make profile`, common/scripts/book.py profile
# (model | counted | DRAM bytes per kernel; its docstring says how).
exec python3 "$(dirname "$0")/book.py" profile "$@"
