# MOE-ResNet — the commands a newcomer needs (README, Set up):
#   make install               create .venv and install the project into it (pip install -e .); then source .venv/bin/activate
#   make test                  the same set-up, then the test suite (make test-quick: a smoke subset of about a minute)
#   make mutation MODULES=experiment_1/report/verdicts.py   mutmut over decision modules → tests/mutation/REPORT.md
#   make coverage              branch coverage of the decision modules (coverage.py)
#   make lint                  ruff: import order, pyflakes, pycodestyle, formatting (make format applies it)
#   make demo                  Experiment 1 on 8 images: sample → evaluate → plot (experiment_1/demo.py).
#                              Data: MOE_DATA, else imagenet-1k/data if it has shards, else the embedded
#                              imagenet-1k/sample; model: ResNet-18, or EfficientNet-Lite0 where its weights
#                              cannot be found or downloaded (printed). ARCH=… forces a model, no fallback.

PYTHON ?= python3
VENV ?= .venv
ARCH ?=
WEIGHTS ?=
MOE_DATA ?=
DEMO_IMAGES ?= 8
DEMO_PATTERN ?=
DEMO_DIR ?=
DEVICE ?= auto

BIN := $(VENV)/bin
DEMO_FLAGS := $(if $(ARCH),--arch $(ARCH),) $(if $(WEIGHTS),--weights $(WEIGHTS),) $(if $(MOE_DATA),--data-dir $(MOE_DATA),) \
	$(if $(DEMO_PATTERN),--pattern '$(DEMO_PATTERN)',) $(if $(DEMO_DIR),--output-dir $(DEMO_DIR),) --num-images $(DEMO_IMAGES) --device $(DEVICE)

.PHONY: install test test-quick mutation coverage lint format demo bench bench-family bench-gpu gpu-check tables reports paper clean-demo

# TORCH_INDEX=https://download.pytorch.org/whl/cpu installs torch and torchvision from that index first (the CPU-only
# build, far smaller than the default CUDA wheels); empty (the default) installs everything from the ordinary index.
# EXTRAS=shapiq installs pyproject.toml's optional extra of that name too (pip install -e .[shapiq]: shapiq, whose
# InteractionValues the blocks' Shapley-family indices export to, and whose ExactComputer the tests compare them with);
# CI sets it (.ci/run).
TORCH_INDEX ?=
EXTRAS ?=
$(BIN)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install torch torchvision --index-url $(TORCH_INDEX),)
	$(BIN)/python -m pip install -e .$(if $(EXTRAS),'[$(EXTRAS)]',)
	touch $@

install: $(BIN)/.installed

# make test: the whole suite (about 2 250 tests; its time on 2 busy CPU cores is in the README). Both targets run with
# TEST_THREADS intra-op threads (OMP_NUM_THREADS), one unless told: the tests' tensors are small, and on 2 shared cores
# the quick subset took more than twice as long with torch's default threads as with one, measured side by side.
# TEST_THREADS= (empty) leaves torch's default.
# make test-quick: a smoke subset of about a minute (QUICK_TESTS): the Möbius transform, the statistics and verdicts,
# the data and sample lists, Experiment 1 end to end on tiny shards, the one-line errors, the floor plan and faces.
TEST_THREADS ?= 1
TEST_ENV := $(if $(TEST_THREADS),OMP_NUM_THREADS=$(TEST_THREADS),)
QUICK_TESTS := tests/experiment_1/mobius/test_mobius.py tests/experiment_1/mobius/test_sparsity.py \
	tests/experiment_1/report/test_stats.py tests/experiment_1/report/test_verdicts.py tests/experiment_1/report/test_report_document.py \
	tests/experiment_1/data/test_data.py tests/experiment_1/data/test_checkout_paths.py tests/experiment_1/data/test_sample_requests.py \
	tests/experiment_1/test_reconstruction.py tests/experiment_1/test_experiment_1_steps.py::test_evaluate_then_plot \
	tests/whole/test_one_line_errors.py::test_write_failures_name_the_path_and_keep_what_was_written \
	tests/whole/test_one_line_errors.py::test_an_output_dir_that_is_a_file_or_under_a_file \
	tests/whole/test_one_line_errors.py::test_a_multi_line_cause_is_printed_on_one_line tests/whole/test_layers.py \
	tests/whole/test_faces.py::test_every_exported_name_resolves_to_its_module \
	tests/whole/test_faces.py::test_a_record_or_face_imports_neither_torch_nor_matplotlib \
	tests/paper/test_claims.py tests/paper/test_records.py
test: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -q

test-quick: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -q $(QUICK_TESTS)

# Systematic mutation testing (tests/mutation/systematic.py): mutmut mutates each module in MODULES inside a temporary
# copy of the tree, runs its mirroring tests against every mutant, records tests/mutation/outcomes/<module>.json and
# rewrites tests/mutation/REPORT.md. MODULES=all runs every decision module (long: minutes per module on 2 cores).
MUTMUT_VERSION := 3.8.1
MODULES ?= experiment_1/report/verdicts.py
mutation: $(BIN)/.installed
	@$(BIN)/python -c "import importlib.metadata as m, sys; sys.exit(m.version('mutmut') != '$(MUTMUT_VERSION)')" 2>/dev/null || \
		$(BIN)/python -m pip install -q mutmut==$(MUTMUT_VERSION)
	OMP_NUM_THREADS=1 $(BIN)/python tests/mutation/systematic.py $(if $(filter all,$(MODULES)),--all,$(MODULES))

# Branch coverage of the decision modules by their mirroring tests (coverage.py), one table in the terminal.
COVERAGE_VERSION := 7.17.5
coverage: $(BIN)/.installed
	@$(BIN)/python -c "import coverage" 2>/dev/null || $(BIN)/python -m pip install -q coverage==$(COVERAGE_VERSION)
	OMP_NUM_THREADS=1 $(BIN)/python tests/mutation/systematic.py --coverage

# The linter (ruff; pyproject.toml's [tool.ruff]): import order, pyflakes, pycodestyle, and the formatting check.
# `make format` applies the formatter and the safe fixes.
RUFF_VERSION := 0.17.6
RUFF := $(BIN)/ruff
$(RUFF): | $(BIN)/.installed
	$(BIN)/python -m pip install -q ruff==$(RUFF_VERSION)
lint: $(RUFF)
	$(RUFF) check .
	$(RUFF) format --check .
format: $(RUFF)
	$(RUFF) check --fix .
	$(RUFF) format .

demo: $(BIN)/.installed
	$(BIN)/python -m experiment_1.demo $(DEMO_FLAGS)

# Engine benchmark on this machine: every architecture, tree vs naive, contiguous vs channels-last.
# CPU size: 1 image at 32 px, naive engine timed on 16 masks.
BENCH_CPU_JSON ?= experiment_1/results_bench/bench_cpu_32px.json
bench: $(BIN)/.installed
	$(BIN)/python -m experiment_1.tools.bench engines --images 1 --resolution 32 --naive-masks 16 --repeats 1 --device $(DEVICE) \
		--json $(BENCH_CPU_JSON)

# The family walk (ResNet-152, L = 50, k ≤ 3 at both corners, 64 px) against the dense tree pass of ResNet-50
# (L = 16) in one run, one thread, 3 interleaved rounds (about 10 minutes on an idle core).
BENCH_FAMILY_JSON ?= experiment_1/results_bench/family_cpu_64px_resnet152.json
bench-family: $(BIN)/.installed
	OMP_NUM_THREADS=1 $(BIN)/python -m experiment_1.tools.bench family --rounds 3 --threads 1 --json $(BENCH_FAMILY_JSON)

# The same table on a CUDA GPU (e.g. an H100), run as is: 224 px, float32 / tf32 / bfloat16, eager and
# torch.compile'd, 1, 4 and 16 images per call, channels-last; then `make tables` puts it into experiment_1/PERFORMANCE.md.
BENCH_GPU_JSON ?= experiment_1/results_bench/bench_gpu.json
bench-gpu: $(BIN)/.installed
	$(BIN)/python -m experiment_1.tools.bench engines --device cuda --resolution 224 --images 1 4 16 --dtypes float32 tf32 bfloat16 \
		--compile-modes eager compiled --memory-formats channels_last --naive-masks 256 --repeats 2 --json $(BENCH_GPU_JSON)

# The first run on a CUDA machine (under 8 minutes on one H100): correctness on CUDA against a CPU float64 pass,
# throughput rows (ResNet-18/34/50, Lite0, Lite1 at 224 px), a 64-image pass and a one-process torchrun (NCCL);
# one JSON, then experiment_1/PERFORMANCE.md's benchmark table from it. Without CUDA: one line, exit status 2.
GPU_CHECK_JSON ?= experiment_1/results_bench/gpu_check.json
gpu-check: $(BIN)/.installed
	$(BIN)/python -m experiment_1.tools.gpu_check --json $(GPU_CHECK_JSON)
	$(BIN)/python -m paper.make_tables

tables: $(BIN)/.installed
	$(BIN)/python -m paper.make_tables

# The committed summaries re-decided from their committed per-image arrays, evaluating nothing: Experiments 1, 2,
# 3A/3B and 3 rebuilt by paper.resummarize, Experiment 5's analysis rerun from per_image.pt. Then `make reports`.
# Experiment 4's overlaps (Lite0 and Lite1) are rerun from their committed compact signatures.npz.
REBUILT_SUMMARIES := $(wildcard experiment_1/results_efficientnet_lite*_sample/summary.json experiment_2/results_efficientnet_lite*_sample/summary.json \
	experiment_2/results_lambda_efficientnet_lite*_sample/summary_all.json experiment_3/results_efficientnet_lite*_sample/summary.json)
.PHONY: summaries
summaries: $(BIN)/.installed
	$(BIN)/python -m paper.resummarize --summary $(REBUILT_SUMMARIES)
	for lite in lite0 lite1; do \
		$(BIN)/python -m experiment_5.step_2_analyze --per-image experiment_5/results_efficientnet_$${lite}_sample/per_image.pt || exit 1; done
	$(EXP4_OVERLAP)
	$(EXP4_OVERLAP_LITE1)

# Every committed REPORT, figure, the 3C limit reports, the depth comparison, tables.md and paper/generated/
# re-rendered from the committed summaries, evaluating nothing (a few minutes); on the code that wrote them,
# `git status --porcelain` then prints nothing.
reports: $(BIN)/.installed
	for lite in lite0 lite1 lite2; do \
		$(BIN)/python -m experiment_1.step_4_plot --summary experiment_1/results_efficientnet_$${lite}_sample/summary.json || exit 1; done
	$(BIN)/python -m experiment_2.step_14_null_compare --summary $(LITE0_SPECTRUM) --seeds-dir $(NULL_DIR)
	$(BIN)/python -m experiment_2.step_2_plot --summary $(LITE0_SPECTRUM) --null-seeds $(NULL_DIR)/summary.json
	for lite in lite1 lite2; do \
		$(BIN)/python -m experiment_2.step_2_plot --summary experiment_2/results_efficientnet_$${lite}_sample/summary.json && \
		$(BIN)/python -m experiment_3.step_2_plot --summary experiment_3/results_efficientnet_$${lite}_sample/summary.json || exit 1; done
	for lite in lite0 lite1; do \
		$(BIN)/python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda_efficientnet_$${lite}_sample/summary_all.json && \
		$(BIN)/python -m experiment_4.step_3_plot --summary experiment_4/results_efficientnet_$${lite}_sample/overlap.json && \
		$(BIN)/python -m experiment_5.step_3_plot --analysis experiment_5/results_efficientnet_$${lite}_sample/analysis.json \
			--per-image experiment_5/results_efficientnet_$${lite}_sample/per_image.pt || exit 1; done
	$(BIN)/python -m experiment_3.step_2_plot --summary experiment_3/results_efficientnet_lite0_sample/summary.json
	$(BIN)/python -m experiment_1.step_4_plot --summary experiment_1/results_efficientnet_lite0_240px_sample/summary.json
	$(BIN)/python -m experiment_2.step_2_plot --summary experiment_2/results_efficientnet_lite0_240px_sample/summary.json
	$(BIN)/python -m experiment_3.step_2_plot --summary experiment_3/results_efficientnet_lite0_240px_sample/summary.json
	for lite in lite0 lite1; do \
		$(BIN)/python -m experiment_4.step_5_shapley_plot --summary experiment_4/results_efficientnet_$${lite}_shapley/shapley.json || exit 1; done
	for arch in resnet18 efficientnet_lite0; do \
		$(BIN)/python -m experiment_2.step_5_limit_report --native experiment_2/results_3c_$${arch}_native/summary_all.json \
			--smooth experiment_2/results_3c_$${arch}_smooth/summary_all.json || exit 1; done
	$(BIN)/python -m experiment_2.step_7_law_test --sweep experiment_2/results_3c_resnet18_first_block_held/summary_all.json
	$(HELD_LAW_TESTS)
	for folder in experiment_2/results_estimator_validation experiment_2/results_estimator_validation_120_draws; do \
		$(BIN)/python -m experiment_2.past_exhaustive.validation.report --output-dir $$folder || exit 1; done
	$(BIN)/python -m paper.depth_compare --ladder efficientnet_lite0 efficientnet_lite1 efficientnet_lite2 --suffix _sample \
		--resolution-control _240px_sample --output paper/results_depth_efficientnet_lite_sample/depth.json
	$(BIN)/python -m paper.make_tables

# The paper: regenerate paper/generated/ (and tables.md) from the summaries, check every finding sentence against
# its verdict (paper.findings), then build paper/build/main.pdf and paper/build/supplement.pdf; the build fails on a
# float too large for its page, a box overfull by more than 10 pt, or a body longer than 21 pages (20 of text, then
# the references; paper.build_log).
# Needs TeX Live from the distribution's packages (Debian/Ubuntu names below).
TEX_PACKAGES := latexmk texlive-latex-base texlive-latex-recommended texlive-fonts-recommended lmodern
# Quiet: it prints the PDF's path, its pages and the LaTeX log's warning count (paper.build_log); latexmk's own
# transcript goes to paper/build/latexmk.out (its last lines are printed if the build fails). The last supplement
# pass is forced (-g): in a fresh build latexmk does not know the supplement reads main.aux (xr) and would skip it.
paper: $(BIN)/.installed
	@$(BIN)/python -m paper.make_tables >/dev/null
	@command -v latexmk >/dev/null && command -v pdflatex >/dev/null || \
		{ echo "make paper: TeX Live not found; install it with: sudo apt-get install $(TEX_PACKAGES)"; exit 1; }
	@$(BIN)/python -m paper.findings
	@mkdir -p paper/build
	@cd paper && for pass in "supplement" "main" "-g supplement"; do \
		latexmk -pdf -silent -interaction=nonstopmode -halt-on-error -outdir=build $$pass.tex >build/latexmk.out 2>&1 || \
		{ tail -n 30 build/latexmk.out; echo "make paper: the build of $$pass.tex failed; the whole transcript is paper/build/latexmk.out"; exit 1; }; done
	@$(BIN)/python -m paper.build_log paper/build/main.log paper/build/supplement.log

clean-demo:
	rm -rf experiment_1/results_demo_*

# The committed results: real pretrained networks on this repository's offline sample data
# (imagenet-1k/sample-1750). Every target resumes from its partial stores: a rerun evaluates only the batches
# that are missing. CPU times are in tables.md (wall time of each run, and all runs together).
SAMPLE_DATA ?= imagenet-1k/sample-1750
SAMPLE_INDEX := experiment_1/sample_index_sample_test.json
LABELLED_INDEX := experiment_1/sample_index_sample_val_min6.json
OFFLINE_FLAGS := --arch efficientnet_lite0 --weights pretrained --batch-size 5 --mask-chunk 512 --num-workers 0 --seed 0 --data-dir $(SAMPLE_DATA)
SWEEP_IMAGES ?= 40
NULL_SEEDS ?= 1 44
NULL_IMAGES ?= 4
NULL_CALIBRATION ?= 50
NULL_DIR := experiment_2/results_efficientnet_lite0_null_seeds
LITE0_SPECTRUM := experiment_2/results_efficientnet_lite0_sample/summary.json

.PHONY: offline-results-low-orders offline-results-estimator-stress offline-results-estimator-validation offline-results-estimator-validation-draws offline-results offline-results-lite0 offline-results-null-seeds offline-results-3c offline-results-exp4 offline-results-exp4-shapley offline-results-exp5 offline-results-depth offline-results-lite1 offline-results-lite2 offline-results-lite0-240px
# The committed runs used one intra-op thread; convolution kernels may sum in another order with more threads,
# which moves logits within float32 round-off. OFFLINE_THREADS=1 reproduces them bit for bit on the same CPU.
OFFLINE_THREADS ?= 1
offline-results-low-orders offline-results-estimator-stress offline-results-estimator-validation offline-results-estimator-validation-draws offline-results offline-results-lite0 offline-results-null-seeds offline-results-3c offline-results-exp4 offline-results-exp4-shapley offline-results-exp5 offline-results-depth offline-results-lite1 offline-results-lite2 offline-results-lite0-240px: \
	export OMP_NUM_THREADS = $(OFFLINE_THREADS)
offline-results: offline-results-lite0 offline-results-null-seeds offline-results-3c offline-results-exp4 offline-results-exp4-shapley offline-results-exp5 offline-results-depth \
	offline-results-low-orders offline-results-estimator-stress offline-results-estimator-validation \
	offline-results-estimator-validation-draws
	$(BIN)/python -m paper.make_tables

# EfficientNet-Lite0, Experiments 1, 2 and 3 from one all-mask pass over the 250 test-shard images and the λ sweep
# (3A/3B) on the first 40; Experiment 2's random-init null over networks is offline-results-null-seeds.
offline-results-lite0: $(BIN)/.installed
	$(BIN)/python -m experiment_1.step_2_sample --data-dir $(SAMPLE_DATA) --pattern 'test-*.parquet' --mode uniform \
		--num-images 250 --seed 0 --output $(SAMPLE_INDEX)
	$(BIN)/python -m paper.single_pass --experiments 1 2 3 --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) --num-random-seeds 5 \
		--results-name results_efficientnet_lite0_sample
	$(BIN)/python -m experiment_2.step_3_lambda_sweep --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) \
		--limit $(SWEEP_IMAGES) --output-dir experiment_2/results_lambda_efficientnet_lite0_sample
	$(BIN)/python -m experiment_1.step_4_plot --summary experiment_1/results_efficientnet_lite0_sample/summary.json
	$(BIN)/python -m experiment_2.step_2_plot --summary $(LITE0_SPECTRUM) --null-seeds $(NULL_DIR)/summary.json
	$(BIN)/python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda_efficientnet_lite0_sample/summary_all.json
	$(BIN)/python -m experiment_3.step_2_plot --summary experiment_3/results_efficientnet_lite0_sample/summary.json

# Experiment 2's random-init null over networks: NULL_SEEDS initialisation seeds of EfficientNet-Lite0 in one process
# (experiment_2.step_13_null_seeds), each with batch-norm statistics re-estimated on the NULL_CALIBRATION test images
# after the evaluated ones and evaluated on the first NULL_IMAGES; then the trained network ranked among them
# (experiment_2.step_14_null_compare) and Experiment 2's REPORT re-rendered with it. 44 seeds: the one-sided rank
# test's smallest p, 1/(n + 1), must clear α = 0.05 after Holm over 2 statistics (n ≥ 39), with a few seeds to spare
# for the input rule; about 20 min on one core. Resumes seed by seed.
offline-results-null-seeds: $(BIN)/.installed
	$(BIN)/python -m experiment_2.step_13_null_seeds --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) --weights random \
		--calibrate-batchnorm $(NULL_CALIBRATION) --limit $(NULL_IMAGES) --seeds $(NULL_SEEDS) --output-dir $(NULL_DIR)
	$(BIN)/python -m experiment_2.step_14_null_compare --summary $(LITE0_SPECTRUM) --seeds-dir $(NULL_DIR)
	$(BIN)/python -m experiment_2.step_2_plot --summary $(LITE0_SPECTRUM) --null-seeds $(NULL_DIR)/summary.json

# Experiment 3C: the small-λ limit in float64 on 6 test images, random-init ResNet-18 (224 px) and pretrained
# EfficientNet-Lite0, each with its own activations and with the smooth swap; then the smooth swap's top-1 cost
# on the 900 labelled images.
LIMIT_FLAGS := --data-dir $(SAMPLE_DATA) --sample-index $(SAMPLE_INDEX) --limit 6 --dtype float64 \
	--lambdas 0.3 0.1 0.03 0.01 0.003 0.001 --batch-size 1 --num-workers 0 --seed 0
# The held-block test's replications (experiment_2/README.md, 3C): the λ grid to 1e-4, a second seed, other images, each
# with its prediction file committed before it runs (the law test refuses a run that is not the one its file predicts);
# then each law test against its prediction, and the combined verdict (all must hold). About 80 s per run on one thread.
HELD := experiment_2/results_3c_resnet18_first_block_held
HELD_PREDICTIONS := experiment_2/limit/predictions
HELD_REPLICATIONS := lambda_1e-4 seed1 images_6_11
HELD_SWEEP = $(BIN)/python -m experiment_2.step_3_lambda_sweep --arch experiment_2.held_block:resnet18_first_block_held \
	--weights random --data-dir $(SAMPLE_DATA) --dtype float64 --lambdas 0.03 0.01 0.003 0.001 3e-4 1e-4 --batch-size 1 \
	--num-workers 0
HELD_LAW_TESTS = for name in $(HELD_REPLICATIONS); do \
		$(BIN)/python -m experiment_2.step_7_law_test --sweep $(HELD)_$$name/summary_all.json \
			--prediction $(HELD_PREDICTIONS)/held_block_$$name.json || exit 1; done; \
	$(BIN)/python -m experiment_2.step_9_law_replications --tests $(foreach name,$(HELD_REPLICATIONS),$(HELD)_$(name)/summary_3c.json) \
		--output-dir $(HELD)_replications
offline-results-3c: $(BIN)/.installed
	for arch in resnet18 efficientnet_lite0; do \
		weights=$$([ $$arch = resnet18 ] && echo random || echo pretrained); \
		$(BIN)/python -m experiment_2.step_3_lambda_sweep --arch $$arch --weights $$weights $(LIMIT_FLAGS) \
			--output-dir experiment_2/results_3c_$${arch}_native && \
		$(BIN)/python -m experiment_2.step_3_lambda_sweep --arch $$arch --weights $$weights $(LIMIT_FLAGS) --smooth-activations \
			--output-dir experiment_2/results_3c_$${arch}_smooth && \
		$(BIN)/python -m experiment_2.step_5_limit_report --native experiment_2/results_3c_$${arch}_native/summary_all.json \
			--smooth experiment_2/results_3c_$${arch}_smooth/summary_all.json || exit 1; done
	$(BIN)/python -m experiment_2.step_6_swap_cost --arch efficientnet_lite0 --weights pretrained --data-dir $(SAMPLE_DATA) \
		--sample-index $(LABELLED_INDEX) --num-workers 0 --seed 0 --output-dir experiment_2/results_3c_efficientnet_lite0_swap_cost
	$(BIN)/python -m experiment_2.step_3_lambda_sweep --arch experiment_2.held_block:resnet18_first_block_held --weights random \
		--data-dir $(SAMPLE_DATA) --sample-index $(SAMPLE_INDEX) --limit 6 --dtype float64 --lambdas 0.03 0.01 0.003 0.001 \
		--batch-size 1 --num-workers 0 --seed 0 --output-dir experiment_2/results_3c_resnet18_first_block_held && \
	$(BIN)/python -m experiment_2.step_7_law_test --sweep experiment_2/results_3c_resnet18_first_block_held/summary_all.json
	$(HELD_SWEEP) --seed 0 --sample-index $(SAMPLE_INDEX) --limit 6 --output-dir $(HELD)_lambda_1e-4
	$(HELD_SWEEP) --seed 1 --sample-index $(SAMPLE_INDEX) --limit 6 --output-dir $(HELD)_seed1
	$(HELD_SWEEP) --seed 0 --sample-index experiment_2/sample_index_3c_test_6_11.json --output-dir $(HELD)_images_6_11
	$(HELD_LAW_TESTS)

# Experiments 4 (expert-set signatures) and 5 (difficulty) on the labelled sample: the 150 classes with six images
# each (900 images), from one all-mask pass that feeds both (about 1 s per image on one core); each target runs
# the pass, which resumes from the other's partial stores (nothing is evaluated twice), then its own analysis.
EXP4_DIR := experiment_4/results_efficientnet_lite0_sample
EXP5_DIR := experiment_5/results_efficientnet_lite0_sample
LABELLED_PASS = $(BIN)/python -m paper.single_pass --experiments 4 5 --sample-index $(LABELLED_INDEX) $(OFFLINE_FLAGS) \
	--extra-taus 0.05 0.2 0.3 0.4 0.5 0.7 --results-name results_efficientnet_lite0_sample
$(LABELLED_INDEX): | $(BIN)/.installed
	$(BIN)/python -m experiment_1.step_2_sample --data-dir $(SAMPLE_DATA) --pattern 'validation-*.parquet' --mode per-class \
		--per-class 6 --min-per-class 6 --seed 0 --output $(LABELLED_INDEX)
# Step 2 reads the committed compact signatures.npz, so `make summaries` reruns it without the pass.
EXP4_OVERLAP_OF = $(BIN)/python -m experiment_4.step_2_overlap --signatures $(1)/signatures.npz --output-dir $(1) \
	--nn-K 32 --num-permutations 1000 --seed 0
EXP4_OVERLAP = $(call EXP4_OVERLAP_OF,$(EXP4_DIR))
offline-results-exp4: $(BIN)/.installed $(LABELLED_INDEX)
	$(LABELLED_PASS)
	$(EXP4_OVERLAP)
	$(BIN)/python -m experiment_4.step_3_plot --summary $(EXP4_DIR)/overlap.json

# Experiment 4's steps 4 and 5, the blocks' Shapley values: EfficientNet-Lite0 on the 48 labelled images of the
# 12 classes × 4 list (Experiment 4's Lite1 list; class-balanced for the between-class share), a few minutes of one core;
# Lite1 (L = 14, about 40 s an image) on the 8 images of the 4 classes × 2 list.
EXP4_SHAPLEY_DIR = experiment_4/results_efficientnet_$(1)_shapley
offline-results-exp4-shapley: $(BIN)/.installed
	$(BIN)/python -m experiment_4.step_4_shapley --sample-index experiment_1/sample_index_sample_val_12x4.json $(OFFLINE_FLAGS) \
		--output-dir $(call EXP4_SHAPLEY_DIR,lite0)
	$(BIN)/python -m experiment_4.step_4_shapley --arch efficientnet_lite1 $(DEPTH_FLAGS) \
		--sample-index experiment_1/sample_index_sample_val_4x2.json --output-dir $(call EXP4_SHAPLEY_DIR,lite1)
	for lite in lite0 lite1; do \
		$(BIN)/python -m experiment_4.step_5_shapley_plot --summary experiment_4/results_efficientnet_$${lite}_shapley/shapley.json || exit 1; done

# Experiment 5 on the same 900 labelled images, with the τ grid where K_τ^err moves.
offline-results-exp5: $(BIN)/.installed $(LABELLED_INDEX)
	$(LABELLED_PASS)
	$(BIN)/python -m experiment_5.step_2_analyze --per-image $(EXP5_DIR)/per_image.pt
	$(BIN)/python -m experiment_5.step_3_plot --analysis $(EXP5_DIR)/analysis.json --per-image $(EXP5_DIR)/per_image.pt

# The depth ladder: EfficientNet-Lite1 and Lite2 (L = 14; Lite2 10 % wider) on the first 24 test images for
# Experiments 1-3 (one all-mask pass each; the depth verdicts pair them with Lite0's same images), Lite1's λ sweep
# on the first 6 of them at λ = 0.5, 0.2, 0.1, and Lite1's Experiments 4-5 on 48 labelled images (12 classes × 4);
# then the comparison with Lite0 (paper.depth_compare). About 40 s per image and pass at L = 14 on one core,
# so each of offline-results-lite1 (~65 min) and offline-results-lite2 (~25 min) fits a working session.
DEPTH_FLAGS := --weights pretrained --batch-size 1 --mask-chunk 512 --num-workers 0 --seed 0 --data-dir $(SAMPLE_DATA)
DEPTH_IMAGES ?= 24
DEPTH_SWEEP_IMAGES ?= 6
DEPTH_INDEX_VAL := experiment_1/sample_index_sample_val_12x4.json

# Experiment 2 past the exhaustive pass (step 8, then the depth reader, step 12): random-init ResNet-50/101/152 at
# 64 px with batch norm calibrated on the 50 test images after the 8 evaluated ones, k = 3 at both corners, 1024 Walsh
# base masks, 120 sub-cubes of 8 blocks — a null for trained networks of the same depths. One target per network (each
# resumable; run one after another), then the depth reader over the three.
LOW_ORDER_ARCHS := resnet50 resnet101 resnet152
LOW_ORDER_IMAGES ?= 8
LOW_ORDER_CALIBRATION ?= 50
LOW_ORDER_RUN = $(BIN)/python -m experiment_2.step_8_low_orders --arch $(1) --weights random \
	--calibrate-batchnorm $(LOW_ORDER_CALIBRATION) --resolution 64 --order 3 --data-dir $(SAMPLE_DATA) \
	--sample-index $(SAMPLE_INDEX) --limit $(LOW_ORDER_IMAGES) --batch-size 1 --num-workers 0 --seed 0 \
	--subcube-size 8 --subcubes 120 --output-dir experiment_2/results_low_orders_$(1)_random_64px
.PHONY: $(foreach arch,$(LOW_ORDER_ARCHS),offline-results-low-orders-$(arch))
$(foreach arch,$(LOW_ORDER_ARCHS),offline-results-low-orders-$(arch)): export OMP_NUM_THREADS = $(OFFLINE_THREADS)
$(foreach arch,$(LOW_ORDER_ARCHS),offline-results-low-orders-$(arch)): offline-results-low-orders-%: $(BIN)/.installed
	$(call LOW_ORDER_RUN,$*)
offline-results-low-orders: $(foreach arch,$(LOW_ORDER_ARCHS),offline-results-low-orders-$(arch))
	$(BIN)/python -m experiment_2.step_12_depth_trend \
		--runs $(foreach arch,$(LOW_ORDER_ARCHS),experiment_2/results_low_orders_$(arch)_random_64px) \
		--output-dir experiment_2/results_low_orders_depth_trend_random_64px
# Step 8's estimators stressed at L = 33 and 50 on synthetic set functions of known spectrum (no network), at step 8's
# budgets: 4 families × 2 depths × 2 projections, 300 replications each (resumable).
offline-results-estimator-stress: $(BIN)/.installed
	$(BIN)/python -m experiment_2.step_15_estimator_stress --replications 300 --workers 1 --seed 0 \
		--output-dir experiment_2/results_estimator_stress
# The estimators past the exhaustive pass against exhaustive tables (experiment_2.step_11_estimator_validation):
# the family pass against Lite1's committed 24-image energies, and sub-cube / Walsh replications on exhaustive tables
# of 4 Lite1 images and 4 random-init ResNet-34 images at 32 px, and two held-out sets: ResNet-34 on test images 8-11
# and Lite1 on test images 12-15 (the second read after the sub-cube interval rule was set).
VALIDATION_TABLES := --table efficientnet_lite1:pretrained:native:4 --table resnet34:random:32:4 \
	--table resnet34:random:32:4:experiment_2/sample_index_validation_8_11.json \
	--table efficientnet_lite1:pretrained:native:4:experiment_2/sample_index_validation_12_15.json
offline-results-estimator-validation: $(BIN)/.installed
	$(BIN)/python -m experiment_2.step_11_estimator_validation --arch efficientnet_lite1 $(DEPTH_FLAGS) \
		--sample-index $(SAMPLE_INDEX) --limit $(DEPTH_IMAGES) \
		--committed experiment_2/results_efficientnet_lite1_sample/per_image.npz \
		$(VALIDATION_TABLES) --replications 1000 --workers 2 \
		--output-dir experiment_2/results_estimator_validation
# The sub-cube intervals at the draws step 8 runs by default (120; at 30 the run above finds the middle orders
# table-dependent): the same 32 tables and a third held-out set, Lite1 on test images 16-19, read after 120 was set;
# sub-cubes only (the Walsh budgets are the run above's).
offline-results-estimator-validation-draws: $(BIN)/.installed
	$(BIN)/python -m experiment_2.step_11_estimator_validation --arch efficientnet_lite1 $(DEPTH_FLAGS) \
		--sample-index $(SAMPLE_INDEX) --limit $(DEPTH_IMAGES) \
		--committed experiment_2/results_efficientnet_lite1_sample/per_image.npz \
		$(VALIDATION_TABLES) --table efficientnet_lite1:pretrained:native:4:experiment_2/sample_index_validation_16_19.json \
		--subcube-draws 120 --walsh-samples --replications 1000 --workers 2 \
		--output-dir experiment_2/results_estimator_validation_120_draws
EXP4_OVERLAP_LITE1 = $(call EXP4_OVERLAP_OF,experiment_4/results_efficientnet_lite1_sample)
offline-results-lite1: $(BIN)/.installed
	$(BIN)/python -m paper.single_pass --experiments 1 2 3 --arch efficientnet_lite1 $(DEPTH_FLAGS) --sample-index $(SAMPLE_INDEX) \
		--limit $(DEPTH_IMAGES) --results-name results_efficientnet_lite1_sample
	$(BIN)/python -m experiment_2.step_3_lambda_sweep --arch efficientnet_lite1 $(DEPTH_FLAGS) --sample-index $(SAMPLE_INDEX) \
		--limit $(DEPTH_SWEEP_IMAGES) --lambdas 0.5 0.2 0.1 --output-dir experiment_2/results_lambda_efficientnet_lite1_sample
	$(BIN)/python -m experiment_1.step_2_sample --data-dir $(SAMPLE_DATA) --pattern 'validation-*.parquet' --mode per-class \
		--per-class 4 --min-per-class 6 --num-classes 12 --seed 0 --output $(DEPTH_INDEX_VAL)
	$(BIN)/python -m paper.single_pass --experiments 4 5 --arch efficientnet_lite1 $(DEPTH_FLAGS) --sample-index $(DEPTH_INDEX_VAL) \
		--results-name results_efficientnet_lite1_sample
	$(EXP4_OVERLAP_LITE1)
	$(BIN)/python -m experiment_5.step_2_analyze --per-image experiment_5/results_efficientnet_lite1_sample/per_image.pt
	$(BIN)/python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda_efficientnet_lite1_sample/summary_all.json
	$(BIN)/python -m experiment_4.step_3_plot --summary experiment_4/results_efficientnet_lite1_sample/overlap.json
	$(BIN)/python -m experiment_5.step_3_plot --analysis experiment_5/results_efficientnet_lite1_sample/analysis.json \
		--per-image experiment_5/results_efficientnet_lite1_sample/per_image.pt

offline-results-lite2: $(BIN)/.installed
	$(BIN)/python -m paper.single_pass --experiments 1 2 3 --arch efficientnet_lite2 $(DEPTH_FLAGS) --sample-index $(SAMPLE_INDEX) \
		--limit $(DEPTH_IMAGES) --results-name results_efficientnet_lite2_sample

# The depth comparison's resolution control: EfficientNet-Lite0 at Lite1's 240 px on the same first 24 test images
# (Experiments 1-3, one pass, a few minutes on 2 CPU cores).
offline-results-lite0-240px: $(BIN)/.installed
	$(BIN)/python -m paper.single_pass --experiments 1 2 3 --sample-index $(SAMPLE_INDEX) $(OFFLINE_FLAGS) --resolution 240 \
		--limit $(DEPTH_IMAGES) --results-name results_efficientnet_lite0_240px_sample
	$(BIN)/python -m experiment_1.step_4_plot --summary experiment_1/results_efficientnet_lite0_240px_sample/summary.json
	$(BIN)/python -m experiment_2.step_2_plot --summary experiment_2/results_efficientnet_lite0_240px_sample/summary.json
	$(BIN)/python -m experiment_3.step_2_plot --summary experiment_3/results_efficientnet_lite0_240px_sample/summary.json

offline-results-depth: offline-results-lite1 offline-results-lite2 offline-results-lite0-240px
	for lite in lite1 lite2; do \
		$(BIN)/python -m experiment_1.step_4_plot --summary experiment_1/results_efficientnet_$${lite}_sample/summary.json && \
		$(BIN)/python -m experiment_2.step_2_plot --summary experiment_2/results_efficientnet_$${lite}_sample/summary.json && \
		$(BIN)/python -m experiment_3.step_2_plot --summary experiment_3/results_efficientnet_$${lite}_sample/summary.json || exit 1; done
	$(BIN)/python -m paper.depth_compare --ladder efficientnet_lite0 efficientnet_lite1 efficientnet_lite2 --suffix _sample \
		--resolution-control _240px_sample --output paper/results_depth_efficientnet_lite_sample/depth.json
