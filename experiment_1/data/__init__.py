"""Images by sample list: parquet shards, sample lists, ImageNet class names and the data-set download.

The package's public names; its modules import each other by module path, never through this face.
"""
from experiment_1.data.shards import (
    IMAGE_SUFFIXES,
    DECODABLE_MODES,
    DOWNLOAD_HINT,
    default_data_dir,
    SampleRef,
    image_column_kind,
    find_sources,
    list_items,
    eval_transform,
    decode_image,
    check_sources,
    SampleDataset,
    check_batch_errors,
)
from experiment_1.data.sample_list import (
    MODES,
    draw_sample,
    sample_list_json,
    parse_entry,
    load_sample_list,
)
from experiment_1.data.imagenet_classes import (
    WNID_FILE,
    FOLDER_LABELS,
    imagenet_wnids,
    imagenet_names,
    folder_labels,
)

__all__ = [
    'IMAGE_SUFFIXES',
    'DECODABLE_MODES',
    'DOWNLOAD_HINT',
    'default_data_dir',
    'SampleRef',
    'image_column_kind',
    'find_sources',
    'list_items',
    'eval_transform',
    'decode_image',
    'check_sources',
    'SampleDataset',
    'check_batch_errors',
    'MODES',
    'draw_sample',
    'sample_list_json',
    'parse_entry',
    'load_sample_list',
    'WNID_FILE',
    'FOLDER_LABELS',
    'imagenet_wnids',
    'imagenet_names',
    'folder_labels',
]
