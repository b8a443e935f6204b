# `make run` and `make test` are the whole set-up: each creates .venv when it is missing and
# installs what it needs from the committed locks (requirements.lock, requirements-dev.lock: exact
# versions with hashes, generated from pyproject.toml by `make lock`), so an upstream release
# cannot change what CI runs. `make test-latest` runs the suite on the newest versions
# pyproject.toml allows, in its own venv, to see drift before it is locked in.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP_VERSION := 26.3
PIP_TOOLS_VERSION := 7.6.2
LOCK_FLAGS := --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links

.PHONY: run test lint test-latest lock install install-dev browser-deps clean profiles library-profiles bench fuzz validate-gpu gpu-wheels

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet pip==$(PIP_VERSION)

# The project itself goes in without dependencies: every dependency came from the lock.
$(VENV)/.installed: requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@ $(VENV)/.installed

# Regenerate both locks after changing pyproject.toml's dependencies (and commit them).
lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet pip-tools==$(PIP_TOOLS_VERSION)
	$(BIN)/pip-compile $(LOCK_FLAGS) -o requirements.lock pyproject.toml
	$(BIN)/pip-compile $(LOCK_FLAGS) --extra dev --extra validation -o requirements-dev.lock pyproject.toml

# The newest versions pyproject.toml allows, in a venv of their own; not part of CI.
LATEST := .venv-latest
test-latest: browser-deps
	test -x $(LATEST)/bin/python || $(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[dev,validation]"
	$(LATEST)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadfile

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/sizer recommend

# The browser tests of the web page need Debian's chromium and chromium-driver (system packages, about 300 MB).
# Where they are missing, this says what it is about to do BEFORE it runs apt-get (as root, or with sudo -n: never
# a password prompt), then installs them; where apt-get is unavailable or fails, the build goes on and those tests
# skip, saying why. `make test BROWSER_DEPS=skip` (or the variable in the environment) installs nothing: the suite
# runs without them, the browser tests skipped with the reason.
BROWSER_DEPS ?= install
CHROMIUM_BIN ?= /usr/bin/chromium
CHROMEDRIVER_BIN ?= /usr/bin/chromedriver
browser-deps:
	@if [ -x $(CHROMIUM_BIN) ] && [ -x $(CHROMEDRIVER_BIN) ]; then exit 0; fi; \
	if [ "$(BROWSER_DEPS)" = skip ]; then \
	  echo "note: chromium and chromium-driver are missing and BROWSER_DEPS=skip: installing nothing; the browser tests will be skipped"; \
	  exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	echo "about to install Debian's chromium and chromium-driver (system packages, about 300 MB) with" \
	     "'$${SUDO:+$$SUDO }apt-get update' and 'apt-get install', for the browser tests of the web page;" \
	     "make test BROWSER_DEPS=skip installs nothing (those tests then skip)"; \
	if command -v apt-get >/dev/null 2>&1 && \
	   ($$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1; \
	then echo "installed chromium and chromium-driver for the browser tests"; \
	else echo "note: could not install chromium with apt-get; the browser tests will be skipped"; fi

# Lint (ruff: pyflakes, bugbear, sorted imports) and types (mypy, strict on sizer/) before the suite: a red
# lint or type check stops `make test` as a failing test does. Settings in pyproject.toml.
# The suite runs in pytest-xdist's worker processes, one per core (TEST_WORKERS=0: in this process alone), each
# test file whole on one worker (--dist loadfile: a file's module-scoped server, browser or wheel is built once).
TEST_WORKERS ?= auto
test: install-dev browser-deps lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: install-dev
	$(BIN)/ruff check sizer api cli validation benchmarks tests
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(LATEST) build *.egg-info

# Regenerate the built-in workload profiles (needs the validation extra: torch).
PROFILE := $(BIN)/sizer profile
profiles: install-dev
	$(PROFILE) validation.model_zoo:mlp_seed001 --name mlp-seed001 --out catalog/workloads/mlp-seed001.yaml
	$(PROFILE) validation.model_zoo:alexnet --name alexnet --out catalog/workloads/alexnet.yaml
	$(PROFILE) validation.model_zoo:vgg11 --name vgg11 --batch 1 --out catalog/workloads/vgg11.yaml
	$(PROFILE) validation.model_zoo:resnet50 --name resnet50 --out catalog/workloads/resnet50.yaml
	for s in 128 384 512; do \
	  $(PROFILE) validation.model_zoo:bert_base --name bert-base --seq-len $$s --batch 1 --out catalog/workloads/bert-base@s$$s.yaml; \
	  $(PROFILE) validation.model_zoo:bert_large --name bert-large --seq-len $$s --batch 1 --out catalog/workloads/bert-large@s$$s.yaml; \
	done
	$(PROFILE) validation.model_zoo:gpt2_small --name gpt2-small --seq-len 1024 --batch 1 --out catalog/workloads/gpt2-small.yaml
	$(MAKE) library-profiles

# The reference libraries' models (validation/library_models.py), random weights, nothing downloaded.
# Image models are profiled on 2 samples (batch norm needs more than one value per channel to train).
# They need torchvision, timm and transformers beside torch, which are kept out of the locks: give a
# Python that has them, e.g. make library-profiles PROFILE_PYTHON=../venv-profiles/bin/python
PROFILE_PYTHON ?= $(BIN)/python
LIBRARY_PROFILE = nice -n 10 $(PROFILE_PYTHON) -m sizer profile
TORCHVISION_MODELS := vgg16 vgg19 resnet18 resnet34 resnet101 resnet152 densenet121 densenet161 densenet201 \
  mobilenet_v2 mobilenet_v3_large mobilenet_v3_small inception_v3 googlenet squeezenet1_0 squeezenet1_1 \
  efficientnet_b0 vit_b_16 vit_l_16 swin_t convnext_tiny regnet_y_400mf shufflenet_v2_x1_0 mnasnet1_0
# torchvision's AlexNet and VGG-11 (1000 classes) beside the validation suite's own 10-class alexnet and vgg11
TORCHVISION_RENAMED := alexnet:alexnet-imagenet vgg11:vgg11-imagenet
TIMM_MODELS := deit_small_patch16_224:deit-small deit_base_patch16_224:deit-base
HF_ENCODERS := distilbert-base-uncased:distilbert roberta-base:roberta-base roberta-large:roberta-large \
  deberta-v3-base:deberta-v3-base t5-small:t5-small t5-base:t5-base
HF_OTHERS := clip-vit-base-patch32:clip-vit-b-32 whisper-base:whisper-base whisper-small:whisper-small
library-profiles:
	for m in $(TORCHVISION_MODELS); do n=$$(echo $$m | tr _ -); \
	  $(LIBRARY_PROFILE) torchvision:$$m --name $$n --batch 2 --out catalog/workloads/$$n.yaml || exit 1; done
	for pair in $(TORCHVISION_RENAMED); do m=$${pair%%:*}; n=$${pair##*:}; \
	  $(LIBRARY_PROFILE) torchvision:$$m --name $$n --batch 2 --out catalog/workloads/$$n.yaml || exit 1; done
	for pair in $(TIMM_MODELS); do m=$${pair%%:*}; n=$${pair##*:}; \
	  $(LIBRARY_PROFILE) timm:$$m --name $$n --batch 2 --out catalog/workloads/$$n.yaml || exit 1; done
	for pair in $(HF_ENCODERS); do m=$${pair%%:*}; n=$${pair##*:}; for s in 128 384 512; do \
	  $(LIBRARY_PROFILE) hf:$$m --name $$n --seq-len $$s --batch 1 --out catalog/workloads/$$n@s$$s.yaml || exit 1; done; done
	for pair in $(HF_OTHERS); do m=$${pair%%:*}; n=$${pair##*:}; \
	  $(LIBRARY_PROFILE) hf:$$m --name $$n --batch 1 --out catalog/workloads/$$n.yaml || exit 1; done

# Speed and load benchmarks (not part of `make test`); results go to benchmarks/results/. Each runs
# even when one before it misses its goal (they say so in their output).
# The GPU suite (issue 40): about 4.5 minutes on an H100 or H200; the report goes to validation/reports/.
# On a machine without sizer's dependencies (the lent GPU machines): `make gpu-wheels` here, carry .whl,
# run `bash validation/gpu_run.sh` there.
validate-gpu: install-dev
	$(BIN)/sizer validate --suite gpu --out validation/reports/gpu-$$(date -u +%Y-%m-%d)

# sizer's own dependencies that the GPU machines' image lacks, as Python 3.12 x86-64 wheels (pinned to the lock).
GPU_WHEELS := pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
  typing-extensions==4.16.0 pint==0.25.3 flexcache==0.3 flexparser==0.4 platformdirs==4.14.8
gpu-wheels: | $(BIN)/python
	$(BIN)/python -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
	  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
	  -d .whl $(GPU_WHEELS)

bench: install-dev
	-$(BIN)/python benchmarks/startup.py
	-$(BIN)/python benchmarks/engine_speed.py
	-$(BIN)/python benchmarks/sweep_rate.py
	-$(BIN)/python benchmarks/http_load.py

# The long fuzzing run: thousands of hypothesis examples per core function, schemathesis on the API.
FUZZ_EXAMPLES ?= 2000
FUZZ_API_EXAMPLES ?= 300
fuzz: install-dev
	$(BIN)/python benchmarks/fuzz.py --examples $(FUZZ_EXAMPLES) --api-examples $(FUZZ_API_EXAMPLES)
