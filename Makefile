# MOE-ResNet — the two commands a newcomer needs:
#   make test                  create .venv, install requirements, run the test suite
#   make demo                  Experiment 1 on a few images: sample → evaluate → plot
#   make demo ARCH=efficientnet_lite0 MOE_DATA=../shared/data/imagenet-1k-sample   (offline, no download)

PYTHON ?= python3
VENV ?= .venv
ARCH ?= resnet18
WEIGHTS ?=
MOE_DATA ?= imagenet-1k/data
DEMO_IMAGES ?= 8
DEMO_PATTERN ?= test-*.parquet
DEMO_DIR ?= experiment_1/results_demo_$(ARCH)
DEVICE ?= auto

BIN := $(VENV)/bin
WEIGHTS_FLAG := $(if $(WEIGHTS),--weights $(WEIGHTS),)

.PHONY: test demo bench tables clean-demo

$(BIN)/.installed: requirements.txt requirements-offline.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -r requirements.txt -r requirements-offline.txt
	touch $@

test: $(BIN)/.installed
	$(BIN)/python -m pytest -q

demo: $(BIN)/.installed
	MOE_DATA=$(MOE_DATA) $(BIN)/python -m experiment_1.step_2_sample --pattern '$(DEMO_PATTERN)' --mode uniform \
		--num-images $(DEMO_IMAGES) --seed 0 --output $(DEMO_DIR)/sample_index.json
	MOE_DATA=$(MOE_DATA) $(BIN)/python -m experiment_1.step_3_evaluate --sample-index $(DEMO_DIR)/sample_index.json \
		--arch $(ARCH) $(WEIGHTS_FLAG) --batch-size 4 --num-workers 2 --device $(DEVICE) --seed 0 --output-dir $(DEMO_DIR)
	$(BIN)/python -m experiment_1.step_4_plot --summary $(DEMO_DIR)/summary.json
	@echo "Experiment 1 report: $(DEMO_DIR)/REPORT.md"

bench: $(BIN)/.installed
	$(BIN)/python -m experiment_1.bench_engines --archs resnet18 resnet34 --images 2 --resolution 224 --device $(DEVICE)

clean-demo:
	rm -rf experiment_1/results_demo_*
