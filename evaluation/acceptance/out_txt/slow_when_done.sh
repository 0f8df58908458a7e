# Passes when out.txt says done, but only after sleeping $1 seconds; fails
# at once otherwise (so the baseline is quick).
grep -qx done out.txt || exit 1
exec sleep "$1"
