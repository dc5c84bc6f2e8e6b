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

.PHONY: test demo bench bench-gpu tables clean-demo

$(BIN)/.installed: requirements.txt requirements-offline.txt
	$(PYTHON) -m venv $(VENV)
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

# Engine benchmark on this machine: every architecture, tree vs naive, contiguous vs channels-last.
# CPU size: 1 image at 32 px, naive engine timed on 16 masks.
BENCH_CPU_JSON ?= experiment_1/results_bench/bench_cpu_32px.json
bench: $(BIN)/.installed
	$(BIN)/python -m experiment_1.bench_engines --images 1 --resolution 32 --naive-masks 16 --repeats 1 --device $(DEVICE) \
		--json $(BENCH_CPU_JSON)

# The same table on a CUDA GPU (e.g. an H100), run as is: 224 px, float32 / tf32 / bfloat16, eager and
# torch.compile'd, 1, 4 and 16 images per call, channels-last; then `make tables` puts it into the README.
BENCH_GPU_JSON ?= experiment_1/results_bench/bench_gpu.json
bench-gpu: $(BIN)/.installed
	$(BIN)/python -m experiment_1.bench_engines --device cuda --resolution 224 --images 1 4 16 --dtypes float32 tf32 bfloat16 \
		--compile-modes eager compiled --memory-formats channels_last --naive-masks 256 --repeats 2 --json $(BENCH_GPU_JSON)

tables: $(BIN)/.installed
	$(BIN)/python -m experiment_1.make_tables

clean-demo:
	rm -rf experiment_1/results_demo_*

# The committed results from a real pretrained network on this repository's offline sample data
# (EfficientNet-Lite0, the 250-image unlabelled test shard of ../shared/data). CPU: about 40 minutes on 2 cores
# (see tables.md, wall time); rerunning only evaluates batches that are missing.
SAMPLE_DATA ?= ../shared/data/imagenet-1k-sample
SAMPLE_INDEX := experiment_1/sample_index_sample_test.json
OFFLINE_FLAGS := --arch efficientnet_lite0 --weights pretrained --batch-size 5 --mask-chunk 512 --num-workers 0 --seed 0 --data-dir $(SAMPLE_DATA)
SWEEP_IMAGES ?= 40
NULL_IMAGES ?= 50

.PHONY: offline-results
offline-results: $(BIN)/.installed
	$(BIN)/python -m experiment_1.step_2_sample --data-dir $(SAMPLE_DATA) --pattern 'test-*.parquet' --mode uniform \
		--num-images 250 --seed 0 --output $(SAMPLE_INDEX)
	$(BIN)/python -m experiment_1.step_3_evaluate --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) \
		--output-dir experiment_1/results_efficientnet_lite0_sample
	$(BIN)/python -m experiment_1.step_4_plot --summary experiment_1/results_efficientnet_lite0_sample/summary.json
	$(BIN)/python -m experiment_2.step_1_evaluate --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) \
		--output-dir experiment_2/results_efficientnet_lite0_sample
	$(BIN)/python -m experiment_2.step_1_evaluate --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) --weights random \
		--limit $(NULL_IMAGES) --output-dir experiment_2/results_efficientnet_lite0_random_sample
	$(BIN)/python -m experiment_2.step_2_plot --summary experiment_2/results_efficientnet_lite0_sample/summary.json \
		--compare-summary experiment_2/results_efficientnet_lite0_random_sample/summary.json
	$(BIN)/python -m experiment_2.step_3_lambda_sweep --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) \
		--limit $(SWEEP_IMAGES) --output-dir experiment_2/results_lambda_efficientnet_lite0_sample
	$(BIN)/python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda_efficientnet_lite0_sample/summary_all.json
	$(BIN)/python -m experiment_1.make_tables
