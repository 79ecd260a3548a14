// The precompiled header of the test suites (tests/CMakeLists.txt) is made
// from this otherwise empty file.
