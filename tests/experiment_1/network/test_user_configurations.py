"""The configurations users build through the public factory API (``experiment_1.network``: ``Residual``,
``ResidualNetwork``, ``register_architecture``, ``build_gated_stack``), each evaluated in float64 by the tree engine,
the naive engine and brute force — the network's *own* forward once per mask, with each block's gate set in the
network itself — and all three equal to round-off:

- (a) an in-place post-sum activation after an in-place residual add (timm's ``x += shortcut; x = act(x)``), with
  ReLU and with a non-idempotent SiLU (a second application, or a shortcut overwritten before the sum, would show);
- (b) biased convolutions before batch norms, folded (``--fold-batchnorm``: :func:`fold_batchnorm`), against the
  unfolded network; batch norms without affine parameters fold too, and ones on batch statistics stay unfolded;
- (c) grouped and depthwise convolutions (MBConv-style blocks with an identity post);
- (d) blocks that change width and resolution (a 1×1 projection shortcut);
- (e) two stages that are one module (one key in ``named_modules``: weight-tied, folded once) and stages whose blocks
  share one name.

Where a configuration is wrong, the refusal is one line naming the fix (tested below).
"""

from __future__ import annotations

import copy
from typing import Callable

import pytest
import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network import (
    ARCHITECTURES,
    Preprocess,
    Residual,
    ResidualNetwork,
    Weights,
    build_gated_stack,
    evaluate_all_masks,
    load_weights_into,
    register_architecture,
)
from experiment_1.network.engines import evaluate_masks_naive
from experiment_1.network.fold_bn import fold_batchnorm
from experiment_1.network.gating import check_evaluation_parity
from experiment_1.run.preflight import check_set_function

SIZE = 12  # input pixels: small, and even after two stride-2 blocks
PREPROCESS = Preprocess(resize=SIZE, crop=SIZE, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
CLASSES = 5
ROUNDOFF = 1e-12  # float64, relative to the largest logit: another order of the same operations, nothing more


def batchnorm(channels: int) -> nn.BatchNorm2d:
    """A batch norm with statistics worth folding (random init would be the identity map), drawn from torch's RNG."""
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.weight.copy_(0.5 + torch.rand(channels))
        bn.bias.copy_(0.2 * torch.randn(channels))
        bn.running_mean.copy_(0.2 * torch.randn(channels))
        bn.running_var.copy_(0.5 + torch.rand(channels))
    return bn


class Block(nn.Module):
    """timm's order: ``shortcut = shortcut(x); x = branch(x) · gate; x += shortcut; return post(x)``.

    ``gate`` is the network's own switch (1: the block as built; 0: its branch removed), so brute force is a plain
    forward of the network with the gates set."""

    def __init__(self, branch: nn.Module, shortcut: nn.Module, post: nn.Module) -> None:
        super().__init__()
        self.branch, self.shortcut, self.post = branch, shortcut, post
        self.gate = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.shortcut(x)
        out = self.branch(x)
        if self.gate != 1.0:
            out = out * self.gate
        out += shortcut  # in place, as timm does
        return self.post(out)


def basic_block(
    cin: int, cout: int, stride: int = 1, groups: int = 1, bias: bool = False, post: Callable[[], nn.Module] = nn.ReLU
) -> Block:
    """Two 3×3 convolutions (``groups`` of them), each before a batch norm; a 1×1 projection where the shape changes."""
    branch = nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, groups=groups, bias=bias),
        batchnorm(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, 1, 1, groups=groups, bias=bias),
        batchnorm(cout),
    )
    shortcut: nn.Module = nn.Identity()
    if stride != 1 or cin != cout:
        shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=bias), batchnorm(cout))
    return Block(branch, shortcut, post())


def mbconv_block(channels: int, expand: int = 2, bias: bool = False) -> Block:
    """Expand (1×1), depthwise 3×3 (``groups`` = channels), project (1×1); identity shortcut and post."""
    hidden = channels * expand
    branch = nn.Sequential(
        nn.Conv2d(channels, hidden, 1, bias=bias),
        batchnorm(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden, bias=bias),
        batchnorm(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, channels, 1, bias=bias),
        batchnorm(channels),
    )
    return Block(branch, nn.Identity(), nn.Identity())


class Net(nn.Module):
    """``stem → stages (each an nn.Sequential of blocks) → pool → fc``; ``stages`` may hold one module twice."""

    def __init__(self, width: int, stages: list[nn.Sequential], out_width: int, bias: bool = False) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=bias), batchnorm(width), nn.ReLU(inplace=True))
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(out_width, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.stages(self.stem(x))), 1))

    def blocks(self) -> list[Block]:
        return [block for stage in self.stages for block in stage]


def cut(network: Net, names: list[str] | None = None) -> ResidualNetwork:
    """The factory's cut: one ``Residual`` per block, its post-sum activation as ``post``, its branch a new
    ``nn.Sequential`` of the block's modules (as timm_resnet_cut builds it: a tied stage's convolutions and batch norms
    then sit in two Sequentials of the stack, and must be folded once)."""
    blocks = network.blocks()
    names = names or [f"block{index}" for index in range(len(blocks))]
    return ResidualNetwork(
        network=network,
        stem=network.stem,
        residuals=[
            Residual(branch=nn.Sequential(*block.branch), shortcut=block.shortcut, post=block.post, name=name)
            for block, name in zip(blocks, names)
        ],
        head=nn.Sequential(network.pool, nn.Flatten(1), network.fc),
        preprocess=PREPROCESS,
    )


def inplace_relu_net() -> Net:  # (a)
    post = lambda: nn.ReLU(inplace=True)  # noqa: E731
    return Net(6, [nn.Sequential(basic_block(6, 6, post=post), basic_block(6, 6, post=post))], 6)


def inplace_silu_net() -> Net:  # (a), a post that is not idempotent
    post = lambda: nn.SiLU(inplace=True)  # noqa: E731
    stage = nn.Sequential(basic_block(6, 6, post=post), basic_block(6, 8, 2, post=post), basic_block(8, 8, post=post))
    return Net(6, [stage], 8)


def biased_net() -> Net:  # (b)
    stage = nn.Sequential(basic_block(4, 4, bias=True), basic_block(4, 6, 2, bias=True), mbconv_block(6, bias=True))
    return Net(4, [stage], 6, bias=True)


def grouped_depthwise_net() -> Net:  # (c)
    stage = nn.Sequential(basic_block(4, 4, groups=2), mbconv_block(4), basic_block(4, 8, 2, groups=4), mbconv_block(8))
    return Net(4, [stage], 8)


def widening_net() -> Net:  # (d)
    stages = [
        nn.Sequential(basic_block(4, 4), basic_block(4, 8, 2)),
        nn.Sequential(basic_block(8, 12, 2), basic_block(12, 12)),
    ]
    return Net(4, stages, 12)


def tied_stages_net() -> Net:  # (e) one stage module twice: one key in named_modules, two stages of the stack
    stage = nn.Sequential(basic_block(6, 6, bias=True), mbconv_block(6))
    return Net(6, [stage, stage], 6)


NETWORKS: dict[str, Callable[[], Net]] = {
    "inplace_relu": inplace_relu_net,
    "inplace_silu": inplace_silu_net,
    "biased": biased_net,
    "grouped_depthwise": grouped_depthwise_net,
    "widening": widening_net,
    "tied_stages": tied_stages_net,
}


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch):
    """``register_architecture`` into a copy of the registry (undone after the test); returns ``build(name, net, …)``
    → (the float64 stack, the plain network it was cut from)."""
    monkeypatch.setattr(ARCHITECTURES, "entries", dict(ARCHITECTURES.entries))

    def build(
        name: str, make: Callable[[], Net], memory_format: str = "channels_last", names: list[str] | None = None
    ) -> tuple[torch.nn.Module, Net]:
        built: list[Net] = []

        def factory(weights: Weights) -> ResidualNetwork:
            network = make()
            load_weights_into(network, weights)
            built.append(network)
            return cut(network, names)

        register_architecture(f"test_{name}", factory, "random")
        stack = build_gated_stack(f"test_{name}", "random", seed=3, dtype=torch.float64, memory_format=memory_format)
        return stack, built[-1]

    return build


def images(count: int = 2) -> torch.Tensor:
    return torch.randn(count, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(7), dtype=torch.float64)


@torch.no_grad()
def brute_force(network: Net, x: torch.Tensor) -> torch.Tensor:
    """``(B, 2^L, C)``: the network's own forward once per mask, gates set in its blocks (bit ``l`` = block ``l``)."""
    blocks = network.blocks()
    if len({id(block) for block in blocks}) < len(blocks):  # tied stages: one module, one gate for both places
        raise ValueError("brute force needs one gate per block")
    logits = []
    try:
        for mask in range(2 ** len(blocks)):
            for bit, block in enumerate(blocks):
                block.gate = float(mask >> bit & 1)
            logits.append(network(x))
    finally:
        for block in blocks:
            block.gate = 1.0
    return torch.stack(logits, dim=1)


def assert_roundoff(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.dtype == expected.dtype == torch.float64
    torch.testing.assert_close(actual, expected, rtol=0, atol=ROUNDOFF * expected.abs().max().item())


def assert_masks_matter(logits: torch.Tensor) -> None:
    """Every single block changes the logits (the comparison would not see a block that does nothing)."""
    num_blocks = logits.shape[1].bit_length() - 1
    for bit in range(num_blocks):
        assert (logits[:, 1 << bit] - logits[:, 0]).abs().max() > 1e-3 * logits.abs().max()


@pytest.mark.parametrize("name", ["inplace_relu", "inplace_silu", "biased", "grouped_depthwise", "widening"])
@pytest.mark.parametrize("memory_format", ["channels_last", "contiguous"])
def test_tree_equals_naive_equals_the_networks_own_forward_on_every_mask(
    name: str, memory_format: str, registry
) -> None:
    stack, network = registry(name, NETWORKS[name], memory_format)
    x = images()
    expected = brute_force(network, x)
    assert_masks_matter(expected)
    naive = evaluate_masks_naive(stack, x, mask_chunk=8)
    assert_roundoff(naive, expected)
    for chunk in (2, 256):  # depth first (a group split at every level) and breadth first
        assert_roundoff(evaluate_all_masks(stack, x, engine="tree", mask_chunk=chunk), expected)
    check_set_function(stack)  # the pipeline's own check accepts it


def test_the_in_place_post_leaves_every_prefix_state_it_does_not_own(registry) -> None:
    """Each tree state is the input of both its children: an in-place post may overwrite only the state being
    handed on. Run the tree twice on one input tensor; the input and every logit stay the same."""
    stack, _ = registry("inplace_silu", inplace_silu_net)
    x = images()
    kept = x.clone()
    first = evaluate_all_masks(stack, x, engine="tree", mask_chunk=4)
    assert torch.equal(x, kept)
    assert torch.equal(evaluate_all_masks(stack, x, engine="tree", mask_chunk=4), first)


@pytest.mark.parametrize("name", ["biased", "grouped_depthwise", "tied_stages"])
def test_folded_batchnorm_after_biased_convolutions_equals_the_unfolded_network(name: str, registry) -> None:
    stack, network = registry(name, NETWORKS[name])
    reference = copy.deepcopy(network)  # the plain network, unfolded (folding edits the shared convolutions)
    convolutions = sum(isinstance(module, nn.Conv2d) for module in stack.modules())
    assert fold_batchnorm(stack) == convolutions  # every convolution here is followed by a batch norm
    assert not any(isinstance(module, nn.BatchNorm2d) for module in stack.modules())
    x = images()
    expected = (
        brute_force(reference, x)
        if name != "tied_stages"
        else evaluate_masks_naive(build_unfolded(registry, name), x, mask_chunk=16)
    )
    assert_masks_matter(expected)
    for engine in ("tree", "naive"):
        assert_roundoff(evaluate_all_masks(stack, x, engine=engine, mask_chunk=4), expected)
    assert check_evaluation_parity(stack, "float64") < 1e-6  # the --fold-batchnorm path's own check passes
    check_set_function(stack)


def build_unfolded(registry, name: str) -> torch.nn.Module:
    return registry(name + "_unfolded", NETWORKS[name])[0]


def test_tied_stages_are_two_stages_of_the_stack_with_one_set_of_weights(registry) -> None:
    """One stage module twice: ``named_modules`` lists it once, the stack gates it at both places (L = 4), and the tree,
    the naive engine and a hand-built forward with per-place gates agree."""
    stack, network = registry("tied_stages", tied_stages_net)
    assert stack.num_blocks == 4 and all(a is b for a, b in zip(stack.blocks[0].branch, stack.blocks[2].branch))
    x = images()
    expected = torch.zeros(x.shape[0], 16, CLASSES, dtype=torch.float64)
    blocks = network.blocks()
    with torch.no_grad():
        for mask in range(16):  # the network's own modules, one gate per place
            state = network.stem(x)
            for bit, block in enumerate(blocks):
                block.gate = float(mask >> bit & 1)
                state = block(state)
            expected[:, mask] = network.fc(torch.flatten(network.pool(state), 1))
        for block in blocks:
            block.gate = 1.0
    assert_masks_matter(expected)
    assert_roundoff(evaluate_masks_naive(stack, x), expected)
    assert_roundoff(evaluate_all_masks(stack, x, engine="tree", mask_chunk=2), expected)


def test_blocks_of_two_stages_may_share_a_name(registry) -> None:
    """Names are labels (REPORTs, block lists), never keys: two stages whose blocks are both called ``0``, ``1`` evaluate
    exactly as with distinct names."""
    shared, network = registry("shared_names", widening_net, names=["0", "1", "0", "1"])
    distinct, _ = registry("distinct_names", widening_net)
    assert shared.block_names == ["0", "1", "0", "1"]
    x = images()
    expected = brute_force(network, x)
    assert torch.equal(evaluate_all_masks(shared, x), evaluate_all_masks(distinct, x))
    assert_roundoff(evaluate_all_masks(shared, x), expected)


# ---- configurations the gating refuses: one line, naming the fix ----


def missing_projection(network: Net) -> ResidualNetwork:
    """A widening block cut without its projection shortcut."""
    wrong = cut(network)
    wrong.residuals[1].shortcut = None
    return wrong


def post_inside_the_branch(network: Net) -> ResidualNetwork:
    """The post-sum activation put at the end of the branch instead of ``post`` (ReLU(F) + x ≠ ReLU(F + x))."""
    wrong = cut(network)
    for part in wrong.residuals:
        part.branch, part.post = nn.Sequential(part.branch, part.post), None
    return wrong


@pytest.mark.parametrize(
    ("make_cut", "expected"),
    [
        (missing_projection, "check that stem → residuals → head lists every layer in forward order"),
        (post_inside_the_branch, "each block is post(shortcut(pre(x)) + branch(pre(x)))"),
    ],
)
def test_a_wrong_cut_is_refused_in_one_line_naming_the_fix(
    make_cut: Callable[[Net], ResidualNetwork], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ARCHITECTURES, "entries", dict(ARCHITECTURES.entries))
    register_architecture("test_wrong_cut", lambda weights: make_cut(widening_net()), "random")
    with pytest.raises(PipelineError) as raised:
        build_gated_stack("test_wrong_cut", "random")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("--arch test_wrong_cut: ") and expected in message


def with_batchnorms(make: Callable[[], Net], **options: bool) -> Callable[[], Net]:
    """``make``'s network with every batch norm rebuilt with ``options`` (``affine``, ``track_running_stats``), its
    running statistics kept where it tracks them."""

    def build() -> Net:
        network = make()
        for module in list(network.modules()):
            for name, child in list(module.named_children()):
                if isinstance(child, nn.BatchNorm2d):
                    replacement = nn.BatchNorm2d(child.num_features, **options)
                    if replacement.track_running_stats:
                        replacement.running_mean.copy_(child.running_mean)
                        replacement.running_var.copy_(child.running_var)
                    setattr(module, name, replacement)
        return network

    return build


def test_batchnorms_without_affine_parameters_fold_exactly(registry) -> None:
    """``BatchNorm2d(affine=False)`` after biased convolutions folds with γ = 1, β = 0 (it raised a TypeError, a
    traceback rather than a line, under --fold-batchnorm)."""
    make = with_batchnorms(biased_net, affine=False)
    stack, network = registry("affine_free", make)
    reference = copy.deepcopy(network)
    assert fold_batchnorm(stack) == sum(isinstance(module, nn.Conv2d) for module in stack.modules())
    x = images()
    expected = brute_force(reference, x)
    assert_masks_matter(expected)
    for engine in ("tree", "naive"):
        assert_roundoff(evaluate_all_masks(stack, x, engine=engine, mask_chunk=4), expected)


def test_batchnorms_on_batch_statistics_are_not_folded_and_the_run_is_refused_in_one_line(registry) -> None:
    """``track_running_stats=False`` normalises by each batch's statistics even in ``eval()``: no fixed affine map to
    fold (left in place, where it raised a TypeError), and no set function of the mask: the pipeline's check names it."""
    stack, _ = registry("batch_statistics", with_batchnorms(widening_net, track_running_stats=False))
    assert fold_batchnorm(stack) == 0
    assert sum(isinstance(module, nn.BatchNorm2d) for module in stack.modules()) > 0
    with pytest.raises(PipelineError) as raised:
        check_set_function(stack)
    message = str(raised.value)
    assert "\n" not in message and message.startswith("test_batch_statistics: ")
