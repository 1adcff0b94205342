# sdfetch: the two set-up commands are `make demo` and `make test`; both install what
# they need first (Scripts/install-deps.sh), so they work on a fresh Debian machine.
PREFIX ?= /usr/local
SWIFT ?= swift
RELEASE_FLAGS = -c release --product sdfetch
# The installed binary carries the Swift runtime and FoundationEssentials inside it, so it
# runs where Swift is not installed: ldd lists only system libraries (libcurl, libpng,
# libjpeg, giflib, libwebp and libwebpdemux, libavif, hiredis, zlib, libcrypto, libc).
# - Not the full Foundation: the sources import FoundationEssentials only, but one library
#   importing Foundation (swift-crypto did, before SHA-256 came from libcrypto) puts it on
#   the link line, and the linker then takes shared symbols from it and drags in
#   CoreFoundation and ICU's data (64 MB stripped instead of 20). No autolinking of those
#   libraries: code that really uses the full Foundation (Thread, DateFormatter,
#   String(format:)...) then fails to link.
# - Linked with lld: gold prints glibc's link-time warning for mktemp on every static link
#   of FoundationEssentials, whose atomic file writes pick a name with it (then open it
#   with O_CREAT|O_EXCL, retrying, as mkstemp does); lld does not print those warnings.
FULL_FOUNDATION = Foundation CoreFoundation FoundationInternationalization _FoundationICU
NO_FULL_FOUNDATION = $(foreach library,$(FULL_FOUNDATION),-Xswiftc -Xfrontend -Xswiftc -disable-autolink-library -Xswiftc -Xfrontend -Xswiftc $(library))
# - Bound with -z now (full RELRO): the dynamic symbols are resolved at start, then their
#   table is read-only (lintian's hardening-no-bindnow).
INSTALL_FLAGS = $(RELEASE_FLAGS) --static-swift-stdlib -Xswiftc -use-ld=lld $(NO_FULL_FOUNDATION) -Xlinker -z -Xlinker now
INSTALLED_BIN = "$$($(SWIFT) build $(INSTALL_FLAGS) --show-bin-path)/sdfetch"
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

.PHONY: deps build release build-tests test test-unit test-integration test-stress docs-check linkcheck tsan demo install uninstall clean fuzz fuzz-smoke bench format deb

deps:
	Scripts/install-deps.sh

build: deps
	$(SWIFT) build --product sdfetch

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# The tests come in three targets, by cost (the README's paragraph for developers):
# - SDFetchUnitTests: in the test process alone (no server, child process or sleep), side by side;
# - SDFetchCoreTests and sdfetchTests: integration through loopback servers, real caches and the
#   built binary, one test at a time: side by side, one clean-clone run in three had the test
#   process's loopback servers answer nothing for 15 s and 64 expectations failed;
# - SDFetchStressTests: kill storms, bombs, silent hosts, memory ceilings and timed behaviour,
#   one test at a time. `make test` leaves them out; `make test-stress` and CI run them.
UNIT = ^SDFetchUnitTests\.
INTEGRATION = ^(SDFetchCoreTests|sdfetchTests)\.
STRESS = ^SDFetchStressTests\.

# The build must print no warning (Scripts/quiet-build.sh), so CI fails on a new one;
# `make demo` and `make install` are kept as quiet but do not stop on one.
# The suites run under at most 4096 open files (Debian's default is 1024): Swift 6.3's
# Foundation `Process.run()` reads past glibc's directory buffer when /proc/self/fd lists
# some 1,300 descriptors or more (swift-corelibs-foundation PR 5472) and crashes now and
# then; with a high limit the caches of the tests running side by side hold 256 folder
# descriptors each and get there.
TEST_FILES = ulimit -Sn 4096 2>/dev/null;
build-tests: deps
	Scripts/quiet-build.sh $(SWIFT) build --build-tests

test-unit: build-tests
	$(TEST_FILES) $(SWIFT) test --skip-build --filter '$(UNIT)'

test-integration: build-tests
	$(TEST_FILES) $(SWIFT) test --skip-build --filter '$(INTEGRATION)' --no-parallel

test-stress: build-tests
	$(TEST_FILES) $(SWIFT) test --skip-build --filter '$(STRESS)' --no-parallel

test: test-unit test-integration

# The docs cannot drift from the code: SDFetchCore.md's map and cited paths, DocC links that
# resolve, and `swift format lint` (Scripts/check-docs.sh). CI runs it after the tests.
docs-check: build-tests
	Scripts/check-docs.sh

# The installed binary's link, as `make install` makes it (static, without the full
# Foundation): a use of a full-Foundation API links in the test build and fails only here,
# so CI (.ci/run) runs it after the tests.
linkcheck: deps
	$(SWIFT) build $(INSTALL_FLAGS)

# The suite under ThreadSanitizer, in a build directory of its own (a full build, about
# four times the plain one, and a slower run): not part of `make test` or CI. Child sdfetch
# processes get TSAN_OPTIONS through the tests' ChildEnvironment. Each suppression in
# Scripts/tsan-suppressions.txt names its reason.
TSAN_SCRATCH = .build-tsan
TSAN_FLAGS = --sanitize=thread --scratch-path $(TSAN_SCRATCH)
# atexit_sleep_ms=0: TSan otherwise sleeps 1 s in every exit with threads still running
# (to catch races at exit), which the "SIGINT exits within 2 s" test would measure as
# sdfetch's. The symbolizer's path: the tests give children a cleaned environment without
# PATH, and unsymbolized reports cannot match a suppression.
SYMBOLIZER := $(shell command -v llvm-symbolizer)
TSAN_ENV = TSAN_OPTIONS="suppressions=$(CURDIR)/Scripts/tsan-suppressions.txt atexit_sleep_ms=0$(if $(SYMBOLIZER), external_symbolizer_path=$(SYMBOLIZER))"

tsan: deps
	$(SWIFT) build --build-tests $(TSAN_FLAGS)
	$(TSAN_ENV) $(SWIFT) test --skip-build $(TSAN_FLAGS) --filter '$(UNIT)'
	$(TSAN_ENV) $(SWIFT) test --skip-build $(TSAN_FLAGS) --skip '$(UNIT)' --no-parallel

demo: build
	Scripts/demo.sh

# The man page and completions are printed by the binary from its option tables. The
# installed copy is stripped (`install -s`: the symbol tables are about a third of its
# size); the unstripped binary stays in the build folder for a debugger.
install: deps
	$(SWIFT) build $(INSTALL_FLAGS)
	install -d $(DESTDIR)$(PREFIX)/bin $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	install -s -m 755 $(INSTALLED_BIN) $(DESTDIR)$(PREFIX)/bin/sdfetch
	$(INSTALLED_BIN) --generate-man > $(MANDIR)/sdfetch.1
	$(INSTALLED_BIN) --generate-completion bash > $(BASHDIR)/sdfetch
	$(INSTALLED_BIN) --generate-completion zsh > $(ZSHDIR)/_sdfetch
	$(INSTALLED_BIN) --generate-completion fish > $(FISHDIR)/sdfetch.fish

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sdfetch $(MANDIR)/sdfetch.1 $(BASHDIR)/sdfetch $(ZSHDIR)/_sdfetch $(FISHDIR)/sdfetch.fish

# A Debian package of what `make install` puts under /usr.
deb: deps
	Scripts/make-deb.sh

# Every libFuzzer target (Fuzz/, listed in Scripts/fuzz.sh) for FUZZ_SECONDS each (default 60).
fuzz: deps
	Scripts/fuzz.sh $(FUZZ_SECONDS)

# Every target for 10 s from its seeds (and the local corpus), so a new parser path is
# fuzzed from its first commit: CI (.ci/run) runs it after the tests. About 3 minutes cold
# on two cores, most of it building SDFetchCore with the sanitizers.
fuzz-smoke: deps
	Scripts/fuzz.sh --smoke

# The bench measures the binary `make install` installs: the Swift runtime linked in, which
# starts faster and calls retain/release directly (warm runs 10-15% faster than the
# dynamically linked build on two cores).
bench: deps
	$(SWIFT) build $(INSTALL_FLAGS)
	SDFETCH_BIN=$(INSTALLED_BIN) Scripts/bench $(BENCH_ARGS)

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build $(TSAN_SCRATCH)
