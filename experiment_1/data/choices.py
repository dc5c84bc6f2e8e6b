"""What a command line may name in the data package, importable without torch or pyarrow: how a sample list is drawn
and how the class folders of an image tree are numbered."""

MODES = ("uniform", "per-class")  # --mode of experiment_1.step_2_sample
FOLDER_LABELS = ("imagenet", "sorted")  # --folder-labels: ImageNet class indices, or 0 … K−1 in sorted order
