# sdfetch: the two set-up commands are `make demo` and `make test`; both install what
# they need first (Scripts/install-deps.sh), so they work on a fresh Debian machine.
PREFIX ?= /usr/local
SWIFT ?= swift
RELEASE_FLAGS = -c release --product sdfetch

.PHONY: deps build release test demo install uninstall clean fuzz bench format

deps:
	Scripts/install-deps.sh

build: deps
	$(SWIFT) build --product sdfetch

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# Suites that assert elapsed times (timeouts, pacing, signals) run on their own, one test
# at a time, after the rest: run beside the CPU-heavy suites on two cores their clocks
# measure the machine, not sdfetch.
TIMED_SUITES = HostHealthTests|PacingTests|RetryTests|TransportFailureTests|BlockedOutputSignalTests

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip '$(TIMED_SUITES)'
	$(SWIFT) test --skip-build --filter '$(TIMED_SUITES)' --no-parallel

demo: build
	Scripts/demo.sh

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/sdfetch" $(DESTDIR)$(PREFIX)/bin/sdfetch

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sdfetch

fuzz: deps
	Scripts/fuzz.sh $(FUZZ_SECONDS)

bench: deps release
	Scripts/bench $(BENCH_ARGS)

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build
