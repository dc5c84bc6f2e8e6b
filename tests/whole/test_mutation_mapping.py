"""The systematic mutation mapping (tests/mutation/systematic.py MODULES) holds every module that decides a verdict or
builds an interval: found here from the code itself (the records' verdict tables, every `Rule(...)` declared, every call
of an interval, test or multiplicity function), so a new decision module fails this test until it is mapped."""

from __future__ import annotations

import ast
from functools import cache

from paper.experiments import VERDICTS
from tests.mutation.systematic import MODULES, PACKAGES, REPO, REPORT

# the calls that build an interval, a test's p or a multiplicity correction (the project's and the libraries')
INTERVAL_CALLS = frozenset(
    {
        "bootstrap_mean_ci",
        "bootstrap_mean_ci_rows",
        "exact_proportion_ci",
        "exact_proportion_ci_rows",
        "bootstrap_t_limits",
        "linearised_bootstrap_t_limits",
        "sign_flip_p_rows",
        "tost",
        "tost_two_sample",
        "holm",
        "holm_sides",
        "bootstrap",  # scipy.stats.bootstrap
        "binomtest",
        "proportion_ci",
        "permutation_test",
        "ppf",
        "quantile",
        "percentile",
    }
)
# modules that make such a call for something that is not an interval, each with why (written out, not derived)
NOT_AN_INTERVAL = {
    "experiment_4/shapley.py": "np.quantile gives the Shapley values' descriptive quartiles over images, no interval",
}
# modules mapped although no call above shows it, each with why
ALSO_MAPPED = {
    "experiment_4/power.py": "the power rule: 'cannot tell (no power)' when the best attainable p exceeds α",
    "experiment_2/past_exhaustive/validation/resume.py": "the validation store's content key: which cells are reused",
    "experiment_1/mobius/transform.py": "the exact Möbius and Walsh transforms every statistic is computed from",
    "experiment_1/mobius/family.py": "the exact Möbius transform on a family of sets (the low orders)",
    "experiment_1/run/partial_store.py": "the resume key: which stored pass a run reuses",
    "experiment_2/scaling.py": "the power-law fit whose slope and interval the λ rules read",
    "experiment_2/past_exhaustive/sampling/u_statistics.py": "the pair statistics' variance the Walsh intervals read",
    "experiment_4/sampled_inference.py": "the permutation p-values of Experiment 4's statistics on sampled pairs",
}


def called_names(tree: ast.AST) -> set[str]:
    """The names a module calls and the functions it defines."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            names.add(function.id if isinstance(function, ast.Name) else getattr(function, "attr", ""))
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


@cache
def deciding_modules() -> dict[str, str]:
    """Every module of the packages that declares a rule or builds an interval (calls or defines a function of
    :data:`INTERVAL_CALLS`) → what shows it."""
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            module = path.relative_to(REPO).as_posix()
            calls = called_names(ast.parse(path.read_text(encoding="utf-8")))
            if "Rule" in calls:
                found[module] = "declares a Rule"
            elif calls & INTERVAL_CALLS and module not in NOT_AN_INTERVAL:
                found[module] = f"calls or defines {', '.join(sorted(calls & INTERVAL_CALLS))}"
    return found


def test_every_module_that_decides_or_builds_an_interval_is_mapped() -> None:
    found = dict(deciding_modules())
    missing = {module: why for module, why in found.items() if module not in MODULES}
    assert not missing, f"add these to MODULES in tests/mutation/systematic.py with their mirroring tests: {missing}"


def test_every_module_a_verdict_table_names_is_mapped() -> None:
    named = {
        rule.partition(":")[0].replace(".", "/") + ".py"
        for table in VERDICTS.values()
        for _, rule in table
        if isinstance(rule, str)
    }
    assert named, "no verdict table names a rule module"
    assert sorted(named - set(MODULES)) == []
    # the engine that re-runs every rule (the verdict checker) and the shared decisions it holds
    assert "experiment_1/report/rules.py" in MODULES


def test_the_search_sees_the_known_decision_modules() -> None:
    # written out: if the search missed these it would miss new ones too
    found = deciding_modules()
    for module in (
        "experiment_1/report/rules.py",
        "experiment_1/report/stats.py",
        "experiment_4/contrast.py",
        "experiment_2/past_exhaustive/depth_trend.py",
        "experiment_2/limit/swap_cost.py",
        "experiment_2/limit/law_replications.py",
        "paper/depth_verdicts.py",
    ):
        assert module in found, module
    assert "experiment_4/shapley.py" not in found and "experiment_1/mobius/sparsity.py" not in found


def test_every_mapped_module_and_test_file_exists_and_nothing_is_mapped_without_a_reason() -> None:
    for module, tests in MODULES.items():
        assert (REPO / module).is_file(), module
        assert tests, module
        for test in tests:
            assert (REPO / test.split("::")[0]).is_file(), f"{module}: {test}"
    extra = set(MODULES) - set(deciding_modules()) - set(ALSO_MAPPED)
    assert sorted(extra) == []


def test_the_report_lists_every_mapped_module_recorded_or_not_yet_run() -> None:
    report = REPORT.read_text(encoding="utf-8")
    missing = [module for module in MODULES if f"`{module}`" not in report]
    assert missing == [], f"rewrite REPORT.md (python tests/mutation/systematic.py --report): it lacks {missing}"
