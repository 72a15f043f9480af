"""hlo_collectives counts a collective once in every form XLA prints it in:
synchronous, an async `-start`/`-done` pair, several arrays combined in one
op (a tuple type), and an op wrapped in `async-start` (its computation holds
the op). The lines are written in the forms XLA:CPU and XLA:GPU print; the
sharding tests count with the same function."""

from hlo_collectives import collectives, instruction, ops

SYNC = """
HloModule jit_matvec, entry_computation_layout={(f32[4,16]{1,0}, f32[4]{0})->f32[4]{0}}, num_partitions=4

ENTRY %main.5_spmd (param.2: f32[4,16], param.3: f32[4]) -> f32[4] {
  %param.3 = f32[4]{0} parameter(1), sharding={devices=[4]<=[4]}, metadata={op_name="x"}
  %all-gather = f32[16]{0} all-gather(%param.3), channel_id=1, replica_groups=mesh['x'=4] {'x'}, dimensions={0}, use_global_device_ids=true, metadata={op_name="x"}
  %param.2 = f32[4,16]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}, metadata={op_name="A"}
  ROOT %ffi_call.3 = f32[4]{0} custom-call(%param.2, %all-gather), custom_call_target="e2e_sharding.matvec", operand_layout_constraints={f32[4,16]{1,0}, f32[16]{0}}, api_version=API_VERSION_TYPED_FFI, metadata={op_name="jit(matvec)/shard_map/ffi_call"}
}
"""

ALL_REDUCE = """
%region_0.0 (reduce_sum.0: f32[], reduce_sum.1: f32[]) -> f32[] {
  %reduce_sum.0 = f32[] parameter(0)
  %reduce_sum.1 = f32[] parameter(1)
  ROOT %reduce_sum.2 = f32[] add(%reduce_sum.0, %reduce_sum.1), metadata={op_name="jit(matvec)/shard_map/psum"}
}
  ROOT %psum.7 = f32[16]{0} all-reduce(%ffi_call.3), channel_id=1, replica_groups=mesh['x'=4] {'x'}, use_global_device_ids=true, to_apply=%region_0.0, metadata={op_name="jit(matvec)/shard_map/psum"}
"""

# XLA:GPU on 4 GPUs: three gathers (data, indices, indptr) combined into one
# async pair whose type is a tuple of tuples.
COMBINED_ASYNC = """
  %all-gather-start = ((f32[2,160]{1,0}, s32[2,160]{1,0}, s32[2,33]{1,0}), (f32[8,160]{1,0}, s32[8,160]{1,0}, s32[8,33]{1,0})) all-gather-start(f32[2,160]{1,0} %param.0, s32[2,160]{1,0} %param.1, s32[2,33]{1,0} %param.2), channel_id=3, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true, backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],"collective_backend_config":{"is_sync":false,"no_parallel_custom_call":false}}
  %all-gather-done = (f32[8,160]{1,0}, s32[8,160]{1,0}, s32[8,33]{1,0}) all-gather-done(((f32[2,160]{1,0}, s32[2,160]{1,0}, s32[2,33]{1,0}), (f32[8,160]{1,0}, s32[8,160]{1,0}, s32[8,33]{1,0})) %all-gather-start)
  %get-tuple-element.3 = f32[8,160]{1,0} get-tuple-element((f32[8,160]{1,0}, s32[8,160]{1,0}, s32[8,33]{1,0}) %all-gather-done), index=0
"""

# A combined synchronous gather (XLA:CPU's combiner), and async all-reduce and
# collective-permute pairs.
MIXED = """
  %all-gather.2 = (f32[16]{0}, s32[16]{0}) all-gather(f32[4]{0} %p.0, s32[4]{0} %p.1), channel_id=2, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true
  %all-reduce-start = f32[16]{0} all-reduce-start(f32[16]{0} %ffi_call.3), channel_id=4, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=%region_0.0, backend_config={"collective_backend_config":{"is_sync":true}}
  %all-reduce-done = f32[16]{0} all-reduce-done(f32[16]{0} %all-reduce-start)
  %collective-permute-start = (f32[4]{0}, f32[4]{0}, u32[], u32[]) collective-permute-start(f32[4]{0} %p.2), channel_id=5, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  %collective-permute-done = f32[4]{0} collective-permute-done((f32[4]{0}, f32[4]{0}, u32[], u32[]) %collective-permute-start)
"""

# Reduce-scatter and all-to-all as XLA:GPU wraps them: an async-start whose
# called computation holds the op (counted there, once).
WRAPPED = """
%async_wrapped (param_0: f32[16]) -> f32[4] {
  %param_0 = f32[16]{0} parameter(0)
  ROOT %reduce-scatter.1 = f32[4]{0} reduce-scatter(f32[16]{0} %param_0), channel_id=6, replica_groups=[1,4]<=[4], use_global_device_ids=true, dimensions={0}, to_apply=%region_0.0
}
%async_wrapped.1 (param_1: f32[4,4]) -> f32[4,4] {
  %param_1 = f32[4,4]{1,0} parameter(0)
  ROOT %all-to-all.1 = f32[4,4]{1,0} all-to-all(f32[4,4]{1,0} %param_1), channel_id=7, replica_groups={{0,1,2,3}}, dimensions={0}
}
ENTRY %main {
  %reduce-scatter-start = ((f32[16]{0}), f32[4]{0}) async-start(f32[16]{0} %x), calls=%async_wrapped
  %reduce-scatter-done = f32[4]{0} async-done(((f32[16]{0}), f32[4]{0}) %reduce-scatter-start), calls=%async_wrapped
  %all-to-all-start = ((f32[4,4]{1,0}), f32[4,4]{1,0}) async-start(f32[4,4]{1,0} %y), calls=%async_wrapped.1
  %all-to-all-done = f32[4,4]{1,0} async-done(((f32[4,4]{1,0}), f32[4,4]{1,0}) %all-to-all-start), calls=%async_wrapped.1
  ROOT %t = (f32[4]{0}, f32[4,4]{1,0}) tuple(%reduce-scatter-done, %all-to-all-done)
}
"""


def nonzero(text):
    return {k: v for k, v in ops(text).items() if v}


def test_a_synchronous_gather_and_reduce_count_once():
    assert nonzero(SYNC) == {"all-gather": 1}
    assert nonzero(ALL_REDUCE) == {"all-reduce": 1}
    # The names and metadata that mention the op are not ops.
    assert ops(SYNC)["all-reduce"] == 0 and ops(ALL_REDUCE)["all-gather"] == 0


def test_an_async_pair_counts_once_and_combined_arrays_are_counted():
    c = collectives(COMBINED_ASYNC)
    assert c["all-gather"] == {"ops": 1, "arrays": 3}
    assert sum(v["ops"] for v in c.values()) == 1


def test_combined_sync_and_other_async_pairs():
    c = collectives(MIXED)
    assert c["all-gather"] == {"ops": 1, "arrays": 2}
    assert c["all-reduce"] == {"ops": 1, "arrays": 1}
    assert c["collective-permute"] == {"ops": 1, "arrays": 1}


def test_wrapped_ops_count_once_inside_their_computation():
    assert nonzero(WRAPPED) == {"reduce-scatter": 1, "all-to-all": 1}


def test_an_instruction_is_parsed_past_a_tuple_type():
    assert instruction("  ROOT %t = (f32[4]{0}, s32[]) tuple(%a, %b)") == ("tuple", 2)
    assert instruction('  %c = f32[] constant(0), metadata={op_name="all-gather(x)"}') == ("constant", 1)
    assert instruction("HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}") is None
    assert instruction("}") is None
