#!/usr/bin/env bash
# model-excerpts.sh README...: the --model excerpts of the READMEs are what the programs print. A fenced block whose
# first line is a command `./chNN/run --model [OPTIONS]` shows lines of that command's output, wrapped anywhere at
# a space: the block's text, its spaces and line breaks squeezed into single spaces, must appear in the output,
# squeezed the same way. Run from the repository root with the programs built. Prints how many excerpts were
# checked; exits 1 naming each one that is not in its output (or whose command is not of that form), 2 on a bad
# argument.
set -u -o pipefail
[ $# -gt 0 ] || { echo "usage: model-excerpts.sh README..." >&2; exit 2; }
status=0 checked=0
squeeze() { tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }
for readme in "$@"; do
    [ -r "$readme" ] || { echo "model-excerpts: cannot read $readme" >&2; exit 2; }
    # each excerpt: its command line, then its text, ended by a NUL
    while IFS= read -r -d '' block; do
        cmd=${block%%$'\n'*}
        text=${block#*$'\n'}
        if ! [[ $cmd =~ ^\./ch[0-9][0-9]/run\ --model(\ [A-Za-z0-9_.-]+)*$ ]]; then
            echo "$readme: an excerpt's command is not ./chNN/run --model [OPTIONS]: $cmd"
            status=1
            continue
        fi
        # shellcheck disable=SC2086  # the options: words checked above
        out=$(${cmd%% *} ${cmd#* } 2>&1 | squeeze)
        want=$(printf '%s\n' "$text" | squeeze)
        checked=$((checked + 1))
        if [[ $out != *"$want"* ]]; then
            printf '%s: the excerpt of `%s` is not in its output:\n  %s\n' "$readme" "$cmd" "$want"
            status=1
        fi
    done < <(awk '/^```/ { if (inb) { if (keep) printf "%c", 0; inb = keep = 0 } else { inb = first = 1 } next }
                  inb && first { first = 0; keep = ($0 ~ /^\.\/ch[0-9][0-9]\/run --model/) }
                  inb && keep { print }' "$readme")
done
echo "model-excerpts: $checked excerpts checked"
exit $status
