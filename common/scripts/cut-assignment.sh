#!/bin/sh
# cut-assignment.sh CH DEST [NAME...] | cut-assignment.sh --list: `make assignment`, common/scripts/book.py
# assignment (a student's copy of a chapter; its docstring says how).
exec python3 "$(dirname "$0")/book.py" assignment "$@"
