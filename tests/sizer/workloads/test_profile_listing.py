"""The built-in workload list (sizer/workloads/profile_listing.py) behind `sizer workloads` and GET /v1/workloads."""
from sizer.workloads.profile import builtin_profile_names
from sizer.workloads.profile_listing import list_workloads


def test_every_builtin_profile_is_listed_once_with_its_size_and_source():
    listed = list_workloads()
    assert [w.name for w in listed] == sorted(builtin_profile_names())
    assert all(w.forward_gflop > 0 and w.params > 0 and w.source for w in listed)


def test_resnet50s_row_is_torchvisions_count():
    # torchvision's ResNet50_Weights.IMAGENET1K_V1 meta: 25,557,032 parameters, 4.09 GMAC (8.18 GFLOP) at 224 x 224;
    # the shipped profile is torch's own count of that network (catalog/workloads/resnet50.yaml)
    resnet = next(w for w in list_workloads() if w.name == "resnet50")
    assert resnet.params == 25_557_032
    assert abs(resnet.forward_gflop / 8.18 - 1) < 0.01


def test_a_token_workload_lists_its_profiled_lengths():
    bert = next(w for w in list_workloads() if w.name == "bert-base")
    assert bert.seq_lens == sorted(bert.seq_lens) and 128 in bert.seq_lens and 512 in bert.seq_lens
