#!/bin/sh
# grade.sh TEST_BINARY [XML_FILE [FILTER]]: `make grade`, common/scripts/book.py grade (the grade sheet of a
# chapter's Criterion tests, from their TAP report; its docstring says how).
exec python3 "$(dirname "$0")/book.py" grade "$@"
