# Hidden acceptance for the shell controls (source: evaluation/bench/source),
# judged per test: writes a JUnit file with one test that the fix must make
# pass (out.txt says done) and one that must keep passing (README.txt is
# still there).
{
  echo '<testsuite name="out_txt">'
  if test -f README.txt; then
    echo '<testcase classname="out_txt" name="readme_kept"/>'
  else
    echo '<testcase classname="out_txt" name="readme_kept"><failure message="README.txt is gone"/></testcase>'
  fi
  if grep -qx done out.txt 2>/dev/null; then
    echo '<testcase classname="out_txt" name="out_says_done"/>'
  else
    echo '<testcase classname="out_txt" name="out_says_done"><failure message="out.txt does not say done"/></testcase>'
  fi
  echo '</testsuite>'
} > report.xml
