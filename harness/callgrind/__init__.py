"""The callgrind harness, a package so that build.py's compile and link
commands are imported as callgrind.build by harness/replay/build.py and
harness/loopbench/price_build.py."""
