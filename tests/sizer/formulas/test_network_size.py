"""sizer/formulas/cells.py, complexity.py, redundancy.py: the analytic expressions of seed 003."""
import pytest

from sizer.errors import InputError
from sizer.formulas.cells import estimate_cells, memory_cell_count
from sizer.formulas.complexity import estimate_complexity, parallel_complexity, sequential_complexity
from sizer.formulas.redundancy import estimate_k1, k1_ratio, k1_verdict


def test_memory_cell_count_eq1():
    # eta_b S (N + N_M) + eta_w N_w + eta_v N_v = 2 x 10 x (100 + 5) + 1 x 1000 + 3 x 7 = 3121
    assert memory_cell_count(10, 100, 5, 1000, cells_per_data_element=2, cells_per_weight=1, variables=7,
                             cells_per_variable=3) == 3121
    result = estimate_cells(10, 100, 5, 1000, eta_b=2, variables=7, eta_v=3, cell_size="4 B")
    assert result.cells == 3121 and result.memory.value == pytest.approx(3121 * 4 / 1e9)


def test_complexity_eq2_eq3():
    times = [[1, 2, 3], [4, 5]]
    assert sequential_complexity(times) == 15 and parallel_complexity(times) == 8
    result = estimate_complexity([75, 512, 10], "1 ns")
    # T1 = (512 x 75 + 10 x 512) ns; T2 = (75 + 512) ns
    assert result.sequential.value == pytest.approx((512 * 75 + 10 * 512) * 1e-9)
    assert result.parallel.value == pytest.approx((75 + 512) * 1e-9)
    assert result.speedup == pytest.approx((512 * 75 + 5120) / 587)


@pytest.mark.parametrize("weights, verdict", [(1000, "exact"), (5000, "redundant"), (10, "insufficient")])
def test_k1_cases(weights, verdict):
    # seed 003 eq. 4 with S = 10, N = 100: K1 = N_w / 1000
    result = estimate_k1(weights, 10, 100)
    assert result.k1 == pytest.approx(weights / 1000) and result.verdict == verdict


def test_k1_domain():
    for weights, samples, features, field in ((1, 10, 10, "weights"), (100, 0, 10, "samples"), (100, 10, 0, "features")):
        with pytest.raises(InputError, match=field):
            estimate_k1(weights, samples, features)
    with pytest.raises(InputError):
        k1_ratio(1, 1, 1)
    assert k1_verdict(1.005) == "exact" and k1_verdict(1.02) == "redundant"


def test_complexity_inputs_checked():
    with pytest.raises(InputError, match="layers"):
        estimate_complexity([])
    with pytest.raises(InputError, match="layers"):
        estimate_complexity([10])
    with pytest.raises(InputError, match="operation_time"):
        estimate_complexity([10, 10], "1 GB")
