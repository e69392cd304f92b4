#!/bin/sh
# heaplab quiz, driven by a script: answers come from the bank itself, in
# bank order (--seed 0), so the expected score follows from what is fed in.
. "$(dirname "$0")/book_lib.sh"
answers_needed "answers in its question bank"
bank="${srcdir:-.}/book/questions.txt"
chapter=6
hl_tmpdir book-quiz

# The answers of chapter 6, in bank order (the first alternative of each).
awk -v ch="$chapter" '
	/^id:/ { a = ""; c = "" }
	/^chapter:/ { c = $2 }
	/^a:/ { sub(/^a:[ \t]*/, ""); sub(/ \|.*/, ""); a = $0 }
	/^$/ { if (c == ch && a != "") print a; a = ""; c = "" }
	END { if (c == ch && a != "") print a }' "$bank" > "$tmp/right"
n=$(wc -l < "$tmp/right")
[ "$n" -ge 3 ] || { echo "FAIL: chapter $chapter has $n questions"; exit 1; }

fail() { echo "FAIL: $*"; cat "$tmp/out"; exit 1; }

# 1. all right
./heaplab quiz --chapter $chapter --seed 0 --bank "$bank" < "$tmp/right" > "$tmp/out" ||
	fail "quiz exited non-zero"
grep -q "^score: $n/$n " "$tmp/out" || fail "all right should score $n/$n"

# 2. the first two right, the rest wrong
{ head -n 2 "$tmp/right"; sed -n '3,$s/.*/no idea/p' "$tmp/right"; } > "$tmp/mixed"
./heaplab quiz --chapter $chapter --seed 0 --bank "$bank" < "$tmp/mixed" > "$tmp/out" ||
	fail "quiz exited non-zero"
grep -q "^score: 2/$n " "$tmp/out" || fail "two right should score 2/$n"
[ "$(grep -c '^why: ' "$tmp/out")" -eq "$n" ] || fail "an explanation after every answer"

# 3. input ends early: only the questions answered count
head -n 1 "$tmp/right" | ./heaplab quiz --chapter $chapter --seed 0 --bank "$bank" > "$tmp/out" ||
	fail "quiz exited non-zero"
grep -q "^score: 1/1 " "$tmp/out" || fail "one answer then EOF should score 1/1"

# 4. a shuffled run asks every question once; a seed gives the same order
yes wrong | head -n "$n" > "$tmp/wrong"
./heaplab quiz --chapter $chapter --seed 42 --bank "$bank" < "$tmp/wrong" > "$tmp/a" || fail "seed 42"
./heaplab quiz --chapter $chapter --seed 42 --bank "$bank" < "$tmp/wrong" > "$tmp/b" || fail "seed 42"
cmp -s "$tmp/a" "$tmp/b" || fail "the same seed must give the same order"
grep -q "^score: 0/$n " "$tmp/a" || { cp "$tmp/a" "$tmp/out"; fail "wrong answers should score 0/$n"; }
[ "$(grep -c '^\[[0-9]*/' "$tmp/a")" -eq "$n" ] || { cp "$tmp/a" "$tmp/out"; fail "every question once"; }

# 5. no colour escapes when stdout is not a terminal
if grep -q "$(printf '\033')" "$tmp/a"; then cp "$tmp/a" "$tmp/out"; fail "colour on a pipe"; fi

# 6. every "see for yourself" command can be typed as shown: no $BOOK left
yes wrong | ./heaplab quiz --seed 0 --bank "$bank" > "$tmp/all" 2>&1
if grep '^see for yourself:' "$tmp/all" | grep -q '\$BOOK'; then cp "$tmp/all" "$tmp/out"; fail "a hint names \$BOOK"; fi
grep -q "^see for yourself: .*$(dirname "$bank")/traces/" "$tmp/all" || { cp "$tmp/all" "$tmp/out"; fail "no hint names the bank's folder"; }

# 7. bad usage is exit status 2
./heaplab quiz --chapter x > /dev/null 2>&1; [ $? -eq 2 ] || fail "--chapter x should exit 2"
# 8. the student's edition's bank (no a: and no why: lines, as
#    book/make-edition.sh writes it) is asked without a score, each
#    question once, with its checking command; --verify refuses it in one line
awk '/^(a|why):/ { skip = 1; next } skip && /^[ \t]/ { next } { skip = 0; print }' "$bank" > "$tmp/questions.txt"
cp -r "$(dirname "$bank")/traces" "$tmp/traces"
./heaplab quiz --chapter $chapter --seed 0 --bank "$tmp/questions.txt" < "$tmp/wrong" > "$tmp/student" 2>&1 ||
	{ cp "$tmp/student" "$tmp/out"; fail "quiz on the student's bank exited non-zero"; }
grep -q "^answered: $n (no score" "$tmp/student" || { cp "$tmp/student" "$tmp/out"; fail "the student's bank: $n answered, no score"; }
if grep -qE '^(right|wrong|why):' "$tmp/student"; then cp "$tmp/student" "$tmp/out"; fail "the student's bank showed an answer"; fi
./heaplab quiz --verify --bank "$tmp/questions.txt" > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "--verify on the student's bank: one line and exit 2 ($(head -c 200 "$tmp/err"))"
echo "quiz: scripted answers scored as expected ($n questions of chapter $chapter)"
