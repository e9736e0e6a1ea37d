# SPDX-License-Identifier: MIT

# fastcp — build, test, benchmark, install.
# Packagers: make && make install DESTDIR=... PREFIX=/usr

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DESTDIR ?=
GO      ?= go
INSTALL ?= install
# The source tree: this Makefile's directory (make -C elsewhere works too).
SRCDIR  := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
# VERSION's version; inside the source tree's own git work tree, git
# describe-style -N-gHASH[-dirty] follows (scripts/version). Override: make VERSION=1.0
ifeq ($(origin VERSION),undefined)
VERSION := $(shell sh '$(SRCDIR)/scripts/version')
endif
ifeq ($(strip $(VERSION)),)
$(error no version: $(SRCDIR)/scripts/version failed (make VERSION=X.Y.Z sets one))
endif
# Where build puts the binary and its manual page (OUT.1, stamped with the
# same version): make build OUT=/tmp/fastcp
OUT     ?= fastcp
MANOUT  := $(OUT).1

# Reproducible: no paths, no build id, no VCS stamp, no cgo; SOURCE_DATE_EPOCH
# is honoured by everything that records a time (nothing in the binary does;
# the built man page's date is SOURCE_DATE_EPOCH's when it is set).
# Packagers: GOFLAGS (from the environment or the command line) reaches go;
# STRIP is the linker's stripping flags, so `make STRIP=` keeps the symbol
# table and DWARF for a debug-symbol package; LDFLAGS are more flags for go's
# linker (-ldflags). LDFLAGS and STRIP count only on make's command line: in
# a packaging environment they are the C toolchain's (LDFLAGS=-Wl,..., a
# cross strip program), which go's linker would refuse.
export CGO_ENABLED = 0
export GOFLAGS
ifneq ($(origin STRIP),command line)
STRIP := -s -w
endif
ifneq ($(origin LDFLAGS),command line)
LDFLAGS :=
endif
GOBUILD = $(GO) build -trimpath -buildvcs=false -ldflags '$(STRIP) -buildid= -X main.version=$(VERSION) $(LDFLAGS)'

# Without HOME (env -i, some build chroots) go has no build cache: one in
# the build tree then.
ifeq ($(shell $(GO) env GOCACHE 2>/dev/null),off)
export GOCACHE := $(CURDIR)/.cache/go-build
export STATICCHECK_CACHE := $(CURDIR)/.cache/staticcheck
endif

# The sources of the binary, so that "make && sudo make install" does not
# need Go (or its cache) as root: install rebuilds only when one changed,
# and then the binary and the manual page get one version together.
GOSOURCES := $(shell find . -name '*.go' ! -name '*_test.go' ! -path './integration_test/*' ! -path './tools/*' ! -path './scripts/*' 2>/dev/null) go.mod go.sum VERSION man/fastcp.1

# The manual page gets the version in its footer and, with
# SOURCE_DATE_EPOCH, that date.
define build-recipe
$(GOBUILD) -o $(OUT) .
sed -e '/^\.TH /s|"fastcp"|"fastcp $(VERSION)"|' \
	$(if $(SOURCE_DATE_EPOCH),-e "/^\.TH /s| [0-9]*-[0-9]*-[0-9]* | $$(date -u -d @$(SOURCE_DATE_EPOCH) +%F 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%F) |") \
	man/fastcp.1 >$(MANOUT).tmp && mv $(MANOUT).tmp $(MANOUT)
endef

.PHONY: all build vet lint test check dist bench install uninstall clean

all: build

# make (build) also fetches the power-cut tests' module (go-fuse, a module
# of its own), as go build fetches the product's, so that make test runs
# every suite; when it cannot (offline, without the modules), the build
# still succeeds and make test says that suite was not run.
build:
	$(build-recipe)
	@$(GO) -C integration_test/crashfs list -deps -test . >/dev/null 2>&1 || \
		env GOFLAGS= $(GO) -C integration_test/crashfs mod download || \
		echo "make: the power-cut tests' module (go-fuse) was not fetched: make test will not run them" >&2

$(OUT): $(GOSOURCES)
	$(build-recipe)

# gofmt and go vet: the Go distribution alone.
define vet-recipe
@echo "gofmt -l"; out=$$(gofmt -l $$(find . -name '*.go' ! -path '*/vendor/*' ! -path './.cache/*')); \
if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
$(GO) vet ./...
endef
vet:
	$(vet-recipe)

# vet, then staticcheck: a Go tool of the tools module (tools/go.mod), so
# the product's go.mod stays the binary's. go fetches that module's
# sources the first time (as build and dist fetch the product's modules
# when they are not there); make test fetches nothing and does not run it. Built from the tools module's own
# directory, it also runs where the product's modules are vendored.
STATICCHECK = .cache/bin/staticcheck
lint:
	$(vet-recipe)
	env GOFLAGS= $(GO) -C tools build -o '$(CURDIR)/$(STATICCHECK)' honnef.co/go/tools/cmd/staticcheck
	@echo "staticcheck ./..."; $(STATICCHECK) ./...

# make test fetches nothing from the network (GOPROXY=off): it needs the
# modules go.mod names in the module cache (make, or go mod download, puts
# them there) or in vendor/ (a release tarball has them). It runs gofmt and
# go vet, the unit tests (with -race where it can be: RACE=auto, on or off),
# then the integration tests against the built binary (root-only cases run
# as root; without root, a mount permission (a container without
# CAP_SYS_ADMIN), xfsprogs, btrfs-progs, strace... they skip, with the
# reason, except under CI=true). scripts/testsum prints each package's
# result, what failed and why tests skipped, and closes with
# "N passed, N failed, N skipped". The power-cut tests (integration_test/
# crashfs, a module of its own) run last; without that module's sources
# (make or go -C integration_test/crashfs mod download fetch them, a
# tarball has its vendor/) they are not run, and the closing line ends
# with ", 1 suite skipped"; under CI=true they must run. make check:
# without -race.
# Under CI=true (.ci/run) the race detector must run.
# RUN limits every package's tests to those go test -run matches:
# make check RUN='TestSparse|TestCopy'
RUN ?=
run_flag = $(if $(RUN),'-run=$(RUN)')
RACE ?= $(if $(filter true,$(CI)),on,auto)
RACE_PLATFORMS := linux/amd64 linux/arm64 linux/loong64 linux/ppc64le linux/riscv64 linux/s390x
go_platform = $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)
go_cc = $(firstword $(shell $(GO) env CC))
# Why -race cannot be used here (empty: it can).
race_off = $(if $(filter off,$(RACE)),RACE=off,$(if $(filter $(RACE_PLATFORMS),$(go_platform)),$(if $(shell command -v '$(go_cc)' 2>/dev/null),,no C compiler ($(go_cc)) for cgo),the race detector does not run on $(go_platform)))
TESTSUM = $(GO) run ./scripts/testsum

test check: export GOPROXY = off
test:
	@$(GO) list -deps -test ./... >/dev/null 2>&1 || { \
		echo "make test fetches nothing, and the modules go.mod names are neither in the module cache nor in vendor/:"; \
		echo "make (or go mod download) fetches them"; $(GO) list -deps -test ./... 2>&1 | head -3; exit 1; } >&2
	$(vet-recipe)
	@why='$(race_off)'; \
	if [ -z "$$why" ]; then race="env CGO_ENABLED=1 $(GO) test -race"; echo "unit tests with -race"; \
	elif [ "$(RACE)" = on ]; then echo "RACE=on: $$why" >&2; exit 1; \
	else race="$(GO) test"; echo "unit tests without -race: $$why"; fi; \
	echo "staticcheck: not run by make test (make lint runs it, fetching it the first time)"; \
	crashfs="';' $(GO) -C integration_test/crashfs test -json -count=1 -timeout 10m $(run_flag) ."; suites=; \
	if $(GO) -C integration_test/crashfs list -deps -test . >/dev/null 2>&1; then \
		echo "go vet (integration_test/crashfs)"; $(GO) -C integration_test/crashfs vet . || exit 1; \
	elif [ "$$CI" = true ]; then \
		echo "CI=true: every suite must run, and $(crashfs_missing)" >&2; exit 1; \
	else \
		crashfs=; suites="-skipped-suite '$(crashfs_missing)'"; echo "not run: $(crashfs_missing)"; \
	fi; \
	pkgs=$$($(GO) list ./... | grep -v '^fastcp/integration_test' | tr '\n' ' ') || exit 1; \
	eval "$(TESTSUM) $$suites $$race -json -count=1 $(run_flag) $$pkgs ';' \
		$(GO) test -json -count=1 -timeout 20m $(run_flag) ./integration_test/ $$crashfs"

check: RACE = off
check: test

crashfs_missing = the power-cut tests (integration_test/crashfs): their module go-fuse is not here (make, or go -C integration_test/crashfs mod download, fetches it)

# make dist: fastcp-VERSION.tar.gz (in DISTDIR), the tracked files with
# VERSION holding make's version, and the modules of the product and of
# the power-cut tests vendored (vendor/, integration_test/crashfs/vendor/),
# so that make && make check work from it offline. Reproducible: sorted,
# owner 0, every mtime SOURCE_DATE_EPOCH (default: the last commit's
# time), gzip without a name or time. Needs the git work tree, and the
# modules in the module cache or the network.
DISTDIR ?= .
DISTNAME = fastcp-$(VERSION)
DIST_EPOCH = $(or $(SOURCE_DATE_EPOCH),$(shell git -C '$(SRCDIR)' log -1 --format=%ct 2>/dev/null))
dist:
	@git -C '$(SRCDIR)' rev-parse --show-toplevel >/dev/null 2>&1 || { echo "make dist: needs the git work tree" >&2; exit 1; }
	@[ -n '$(DIST_EPOCH)' ] || { echo "make dist: no commit: set SOURCE_DATE_EPOCH" >&2; exit 1; }
	@set -e; stage=$$(mktemp -d); trap 'rm -rf "$$stage"' EXIT; d="$$stage/$(DISTNAME)"; mkdir "$$d"; \
	cd '$(SRCDIR)'; git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$$d"; \
	echo '$(VERSION)' >"$$d/VERSION"; \
	echo "go mod vendor (the product's modules, and integration_test/crashfs's)"; \
	env GOFLAGS= $(GO) mod vendor -o "$$d/vendor"; \
	env GOFLAGS= $(GO) -C integration_test/crashfs mod vendor -o "$$d/integration_test/crashfs/vendor"; \
	cd '$(CURDIR)'; mkdir -p '$(DISTDIR)'; \
	tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
		--mode='u+rw,go-w,a+rX' --mtime='@$(DIST_EPOCH)' \
		-C "$$stage" -cf - $(DISTNAME) | gzip -9n >'$(DISTDIR)/$(DISTNAME).tar.gz.tmp'; \
	mv '$(DISTDIR)/$(DISTNAME).tar.gz.tmp' '$(DISTDIR)/$(DISTNAME).tar.gz'; \
	echo '$(DISTDIR)/$(DISTNAME).tar.gz'

# fastcp against cp, dd and io.Copy (peerbench), then the durability modes
# against cp && sync, dd conv=fdatasync and fio (durabench): medians, ratios,
# targets met or missed. Needs root (loop mounts); takes about 30 minutes
# on an idle 2-core VM (the cold 4 GiB copies are most of it). A subset:
#   make bench PEERBENCH="-only 'cold|tree'" DURABENCH="-only sync"
# (peerbench -list and durabench -h name the scenarios; DURABENCH=-h lists
# durabench's flags).
PEERBENCH ?=
DURABENCH ?=
bench: build
	$(GO) run ./integration_test/peerbench $(PEERBENCH)
	$(GO) run ./integration_test/durabench $(DURABENCH)

# Installs what build made: the binary and its manual page come from one
# build, so they carry the same version whoever runs install.
install: $(OUT)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(INSTALL) -m755 $(OUT) $(DESTDIR)$(BINDIR)/fastcp
	$(INSTALL) -m644 $(MANOUT) $(DESTDIR)$(MANDIR)/man1/fastcp.1
	$(INSTALL) -m644 completions/fastcp.bash $(DESTDIR)$(BASHCOMPDIR)/fastcp
	$(INSTALL) -m644 completions/_fastcp $(DESTDIR)$(ZSHCOMPDIR)/_fastcp
	$(INSTALL) -m644 completions/fastcp.fish $(DESTDIR)$(FISHCOMPDIR)/fastcp.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/fastcp \
		$(DESTDIR)$(MANDIR)/man1/fastcp.1 \
		$(DESTDIR)$(BASHCOMPDIR)/fastcp \
		$(DESTDIR)$(ZSHCOMPDIR)/_fastcp \
		$(DESTDIR)$(FISHCOMPDIR)/fastcp.fish

clean:
	rm -f $(OUT) $(MANOUT) fastcp-*.tar.gz
	rm -rf .cache
