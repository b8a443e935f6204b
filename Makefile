# `make run` and `make test` are the whole set-up: each creates .venv when it is missing and
# installs what it needs from pyproject.toml before running.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test install install-dev browser-deps clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,validation]"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/sizer recommend

# The browser test of the web page needs Debian's chromium and chromium-driver. Installed here
# where missing; where apt-get is unavailable or fails, the build goes on and that test skips,
# saying why.
browser-deps:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	if command -v apt-get >/dev/null 2>&1 && \
	   ($$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1; \
	then echo "installed chromium and chromium-driver for the browser test"; \
	else echo "note: could not install chromium with apt-get; the browser test will be skipped"; fi

test: install-dev browser-deps
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info
