# An acceptance run that reports no test at all: an empty JUnit suite.
echo '<testsuite name="out_txt"></testsuite>' > report.xml
