{#- The Python functions of the generated module and their stubs' signatures,
    printed from the views of src/target/xla_jax/python.rs. Statements start with a
    newline and `ind`, their indentation; expressions print on one line. -#}

{#- A function: its `def`, its docstring, `register()` and its body. #}
{%- macro function(f, ind) %}


{{ ind }}def {{ f.py_name }}({% call params(f.params, false) %}{% endcall %}):
{{ ind }}    """{% call doc_first(f.doc) %}{% endcall %}
{%- call doc_rest(f.doc, ind ~ "    ") %}{% endcall %}
{{ ind }}    """
{%- call eager(f, ind ~ "    ") %}{% endcall %}
{%- if f.registers %}
{{ ind }}    register()
{%- endif %}
{%- call body(f, ind ~ "    ") %}{% endcall %}
{%- endmacro %}

{#- An eager call (outside every trace) runs as the jax.jit of the
    function, keyed by its keyword values (and a tuned kernel's tables):
    see the runtime's `_begen_eager`. #}
{%- macro eager(f, ind) %}
{{ ind }}_begen_s = _begen_eager({% call tuple(f.inputs) %}{% endcall %}, {{ "{" }}
{%- for k in f.static_keywords() %}{% if !loop.first %}, {% endif %}"{{ k }}": {{ k }}{% endfor %}
{%- if let Some(kw) = f.kwargs() %}{% if !f.static_keywords().is_empty() %}, {% endif %}**{{ kw }}{% endif %}}
{%- if f.tuned() %}, _begen_tune_state(){% endif %}
{%- if let Some(kw) = f.kwargs() %}, tuple({{ kw }}){% endif %})
{{ ind }}if _begen_s is not None:
{{ ind }}    _begen_s = _begen_jit({{ f.py_name }}, _begen_s{% for x in f.inputs %}, {{ x }}{% endfor %})
{{ ind }}    if _begen_s is not _begen_eager:
{{ ind }}        return _begen_s
{%- endmacro %}

{#- The docstring's first line. -#}
{%- macro doc_first(d) -%}
{%- match d %}
{%- when PyDoc::Kernel(k) %}Calls the {{ k.platform }} kernel `{{ k.name }}` ({{ k.file }}:{{ k.line }}) through XLA FFI.
{%- when PyDoc::Algorithm { name, .. } -%}
Algorithm `{{ name }}`: calls its best implementation for the platform the call is lowered for.
{%- endmatch %}
{%- endmacro %}

{#- The docstring's further lines, at indentation `ind` (empty lines stay
    empty). #}
{%- macro doc_rest(d, ind) %}
{%- match d %}
{%- when PyDoc::Kernel(k) %}

{{ ind }}arg_spec: {{ k.arg_spec }}
{%- if k.typed %}
{% for (py, contract, role) in k.inputs %}
{{ ind }}{{ py }}: {% match role %}
{%- when PyInputRole::InPlace %}{{ contract }} (updated in place and returned)
{%- when PyInputRole::List %}a list or tuple of {{ contract }} (inputs, at least one)
{%- when PyInputRole::Input %}{{ contract }} (input)
{%- endmatch %}
{%- endfor %}
{%- for (name, contract) in k.rets %}
{{ ind }}-> {{ name }}: {{ contract }} ({% if k.out_optional %}out= optional{% else %}give out={% endif %})
{%- endfor %}
{%- for (py, values, from_inputs) in k.consts %}
{{ ind }}{{ py }}: one of {{ values }} ({% if from_inputs %}from the inputs' dtype{% else %}keyword{% endif %})
{%- endfor %}
{%- endif %}
{%- if k.side_effect %}

{{ ind }}Has side effects: XLA keeps every call.
{%- endif %}
{%- for (attr, values) in k.unsupported %}
{{ ind }}Does not support {{ attr }} = {{ values }}.
{%- endfor %}
{%- if let Some(backward) = k.backward %}

{{ ind }}Differentiable: a jax.custom_vjp whose backward kernel is `{{ backward }}`.
{%- endif %}
{%- if let Some(rule) = k.backward_rule %}

{{ ind }}Differentiable: a jax.custom_vjp whose backward pass is the Python function `{{ rule }}`.
{%- endif %}
{%- if let Some(rules) = k.rules %}

{{ ind }}A JAX primitive (jvp, transpose, vmap): {% for r in rules %}{% if !loop.first %}; {% endif %}
{%- match r %}
{%- when PyRuleDoc::Tangent(t) %}tangent kernel `{{ t }}`
{%- when PyRuleDoc::Linear(l) %}linear in {{ l }}
{%- when PyRuleDoc::Transpose(p, t) %}transpose of {{ p }} `{{ t }}`
{%- when PyRuleDoc::Backward(b) %}reverse mode in the other inputs through backward kernel `{{ b }}` (no forward mode there)
{%- when PyRuleDoc::Fold(d) %}vmap folds the batch into `{{ d }}` (one call)
{%- endmatch %}
{%- endfor %}.
{%- endif %}
{%- if let Some((shard, reduce)) = k.shards %}

{{ ind }}Runs per shard across devices: {% if let Some(s) = shard %}split along {{ s }}{% endif %}
{%- if shard.is_some() && reduce.is_some() %}; {% endif %}
{%- if let Some(r) = reduce %}partial sums over {{ r }} added up{% endif %}.
{%- endif %}
{%- when PyDoc::Algorithm { platforms, fallback, tuned, .. } %}
{% for (platform, listed) in platforms %}
{{ ind }}{{ platform }}: {% for (n, p) in listed %}{% if !loop.first %}, {% endif %}{{ n }} (priority {{ p }}){% endfor %}
{%- endfor %}
{%- if !fallback %}
{{ ind }}A call the best implementation refuses is an error (no fallback).
{%- endif %}
{%- if tuned %}
{{ ind }}Tuned: per platform, the implementation the tuning tables choose for the device and shape, among those
{{ ind }}that support the call (else the priority order); config={"implementation": NAME} runs one by name.
{%- endif %}
{%- endmatch %}
{%- endmacro %}

{#- The parameter list, annotated for the stub. -#}
{%- macro params(ps, stub) -%}
{%- for p in ps.iter() %}{% if !loop.first %}, {% endif %}
{%- match p %}
{%- when PyParam::Input { name, list } %}{{ name }}{% if stub %}: {% if list %}Sequence[ArrayLike]{% else %}ArrayLike{% endif %}{% endif %}
{%- when PyParam::Slash %}/
{%- when PyParam::Star %}*
{%- when PyParam::Attr { name, stub: ty, default } %}{{ name }}{% if stub %}: {{ ty }}{% endif %}{% if let Some(d) = default %}={{ d }}{% endif %}
{%- when PyParam::Const { name, stub: ty, default } %}{{ name }}{% if stub %}: {{ ty }}{% endif %}{% if let Some(d) = default %}={{ d }}{% endif %}
{%- when PyParam::Out { optional, structs, variadic } %}out
{%- if stub %}: {% if variadic %}Sequence[jax.ShapeDtypeStruct]{% else %}{% call several("jax.ShapeDtypeStruct", structs) %}{% endcall %}{% endif %}{% if optional %} | None = None{% endif %}
{%- else if optional %}=None
{%- endif %}
{%- when PyParam::Config { implementation } %}config{% if stub %}: dict[str, {% if implementation %}str | {% endif %}int | bool] | None = None{% else %}=None{% endif %}
{%- when PyParam::Kwargs { name } %}**{{ name }}{% if stub %}: Any{% endif %}
{%- endmatch %}
{%- endfor %}
{%- endmacro %}

{#- `ty` for one, `tuple[ty, ...]` for another number. -#}
{%- macro several(ty, n: usize) -%}
{%- if *n == 1 %}{{ ty }}{% else %}tuple[{% for k in 0..*n %}{% if k > 0 %}, {% endif %}{{ ty }}{% endfor %}]{% endif %}
{%- endmacro %}

{#- The statements of a body, at indentation `ind`. #}
{%- macro body(f, ind) %}
{%- match f.body %}
{%- when PyBody::Dispatch(d) %}
{{ ind }}return _begen_dispatch{% if d.tuned %}_tuned{% endif %}({{ d.name }}, {% call tuple(f.inputs) %}{% endcall %}, {{ "{" }}
{%- for (lit, py) in d.keywords %}{% if !loop.first %}, {% endif %}{{ lit }}: {{ py }}{% endfor %}})
{%- when PyBody::Kernel(k) %}
{%- if let Some(s) = k.split %}
{{ ind }}_begen_r = {{ s.rule }}
{%- if let Some(per) = s.per_shard %}
{{ ind }}_begen_p = _begen_split(_begen_r, {% call tuple(f.inputs) %}{% endcall %})
{{ ind }}if _begen_p is not None:
{{ ind }}    return _begen_shard_map(_begen_p, _begen_r, lambda {% for x in f.inputs %}{{ x }}, {% endfor -%}
_begen_out: {{ f.py_name }}({% call args(per) %}{% endcall %}), {% call tuple(f.inputs) %}{% endcall %}, {% if s.out %}out{% else %}None{% endif %}
{%- if let Some(v) = k.vjp %}{% if let Some(r) = v.residual %}, public={{ r.public }}{% endif %}{% endif %})
{%- else %}
{{ ind }}_begen_split(_begen_r, {% call tuple(f.inputs) %}{% endcall %})
{%- endif %}
{%- endif %}
{%- if let Some(v) = k.vjp %}
{%- if let Some(r) = v.residual %}
{%- if v.shares %}
{{ ind }}_begen_c = _begen_tv = _begen_tf = None
{%- endif %}
{{ ind }}def _begen_primal({{ f.inputs|join(", ") }}):
{%- if v.shares %}
{{ ind }}    nonlocal _begen_c, _begen_tv, _begen_tf
{%- endif %}
{{- crate::target::xla_jax::py_kernel(f, k, ind ~ "    ")? }}
{{ ind }}def _begen_backward({% for x in f.inputs %}{{ x }}, {% endfor %}_begen_o, _begen_ct):
{{ ind }}    {% call backward_returns(v) %}{% endcall %}{{ v.backward }}({{ r.exprs|join(", ") }}
{%- if !v.args.is_empty() %}{% if !r.exprs.is_empty() %}, {% endif %}{% call args(v.args) %}{% endcall %}{% endif %})
{%- call backward_spread(v, ind) %}{% endcall %}
{{ ind }}_begen_honest({{ k.shown }}, {% call tuple(f.inputs) %}{% endcall %}, {{ v.names }})
{{ ind }}return {{ r.call }}(_begen_primal, _begen_backward, {% call tuple(f.inputs) %}{% endcall %}, {{ r.public }}, {{ r.outputs }})
{%- else %}
{%- if v.shares %}
{{ ind }}_begen_c = _begen_tv = _begen_tf = None
{%- endif %}
{{ ind }}def _begen_primal({{ f.inputs|join(", ") }}):
{%- if v.shares %}
{{ ind }}    nonlocal _begen_c, _begen_tv, _begen_tf
{%- endif %}
{{- crate::target::xla_jax::py_kernel(f, k, ind ~ "    ")? }}
{{ ind }}def _begen_backward({% call vjp_params(f.inputs, v.cotangents) %}{% endcall %}):
{{ ind }}    {% call backward_returns(v) %}{% endcall %}{{ v.backward }}({% call vjp_params(f.inputs, v.cotangents) %}{% endcall %}
{%- if !v.args.is_empty() %}{% if !f.inputs.is_empty() || v.cotangents > 0 %}, {% endif %}{% call args(v.args) %}{% endcall %}{% endif %})
{%- call backward_spread(v, ind) %}{% endcall %}
{{ ind }}_begen_honest({{ k.shown }}, {% call tuple(f.inputs) %}{% endcall %}, {{ v.names }})
{{ ind }}return _begen_vjp(_begen_primal, _begen_backward, {% call tuple(f.inputs) %}{% endcall %}, {{ v.cotangents }})
{%- endif %}
{%- else %}
{{- crate::target::xla_jax::py_kernel(f, k, ind)? }}
{%- endif %}
{%- endmatch %}
{%- endmacro %}

{#- A kernel's statements from the refusals to its return. #}
{%- macro kernel(f, k, ind) %}
{%- if !k.refusals.is_empty() %}
{{ ind }}_begen_refuse({{ k.shown }}, {{ "{" }}
{%- for r in k.refusals %}{% if !loop.first %}, {% endif %}{{ r.attr }}: ({{ r.py }}, {{ r.values }}){% endfor %}})
{%- endif %}
{%- if k.hoisted %}
{%- for a in k.call.attrs %}
{{ ind }}_begen_v{{ loop.index0 }} = {% call conversion(a.conversion, a.py, a.label) %}{% endcall %}
{%- endfor %}
{%- endif %}
{%- match k.check %}
{%- when PyCheck::Untyped { names, outs, rest } %}
{%- if let Some(r) = rest %}
{%- for (x, lit) in r.inputs %}
{{ ind }}_begen_rest_inputs({{ k.shown }}, {{ x }}, {{ lit }})
{%- endfor %}
{%- if !k.call.arrays.is_empty() %}
{{ ind }}_begen_honest({{ k.shown }}, {% call tuple(k.call.arrays) %}{% endcall %}, {{ names }})
{%- endif %}
{%- if let Some((n, message)) = r.outs %}
{{ ind }}_begen_rest_out(out, {{ n }}, {{ message }})
{%- endif %}
{%- else %}
{{ ind }}_begen_honest({{ k.shown }}, {% call tuple(f.inputs) %}{% endcall %}, {{ names }})
{%- endif %}
{%- if let Some((n, message)) = outs %}
{{ ind }}if not isinstance(out, (tuple, list)) or len(out) != {{ n }}:
{{ ind }}    raise TypeError({{ message }})
{%- endif %}
{%- when PyCheck::Typed(t) %}
{%- if let Some(tu) = t.tune %}
{{ ind }}_begen_tv, _begen_tf = _begen_tune_fixed({{ tu.key }}, config, {{ "{" }}
{%- for (n, py) in tu.given %}{% if !loop.first %}, {% endif %}{{ n }}: {{ py }}{% endfor %}})
{%- endif %}
{{ ind }}_begen_d, _begen_c = {% if t.lists %}_begen_list_inputs{% else %}_begen_inputs{% endif -%}
({{ k.shown }}, {% call tuple(f.inputs) %}{% endcall %}, {{ t.specs }}, (
{%- for c in t.consts %}{% if !loop.first %}, {% endif -%}
({{ c.name }}, {{ c.py }}, {{ c.kind }}, {% if c.tuned %}_begen_tv[{{ c.name }}]{% else if let Some(g) = c.given %}{{ g }}{% else %}None{% endif %}, {{ c.values }})
{%- endfor %}{% if t.consts.len() == 1 %},{% endif %}))
{%- for (name, py) in t.sizes %}
{{ ind }}_begen_size({{ k.shown }}, _begen_d, {{ name }}, {{ py }})
{%- endfor %}
{%- if let Some(tu) = t.tune %}
{{ ind }}_begen_c = _begen_tune_pick({{ tu.key }}, _begen_c, _begen_d, {% call tuple(f.inputs) %}{% endcall %}, _begen_tf)
{%- endif %}
{%- if let Some(outputs) = t.outputs %}
{{ ind }}_begen_o = _begen_outputs({{ k.shown }}, out, {{ outputs }}, _begen_d, _begen_c)
{%- endif %}
{%- endmatch %}
{%- if let Some(p) = k.primitive %}
{{ ind }}def _begen_raw({{ f.inputs|join(", ") }}):
{{ ind }}    return {{ crate::target::xla_jax::py_call(k.call, k.hoisted)? }}
{%- if let Some(r) = p.jvp %}
{{ ind }}def _begen_jvp({% call args(r.args) %}{% endcall %}{% if !r.args.is_empty() %}, {% endif %}out):
{{ ind }}    return {% call related(r) %}{% endcall %}
{%- endif %}
{%- for (_, i, r) in p.transposes %}
{%- let ps = r.params.as_ref().unwrap_or(r.args) %}
{{ ind }}def _begen_transpose{{ i }}({% call args(ps) %}{% endcall %}{% if !ps.is_empty() %}, {% endif %}out):
{{ ind }}    return {% call related(r) %}{% endcall %}
{%- endfor %}
{%- if let Some(fo) = p.fold %}
{{ ind }}def _begen_again({% call args(fo.again.args) %}{% endcall %}{% if !fo.again.args.is_empty() %}, {% endif %}out):
{{ ind }}    return {% call related(fo.again) %}{% endcall %}
{%- endif %}
{%- if let Some(v) = p.backward %}
{{ ind }}def _begen_backward({% call vjp_params(f.inputs, v.cotangents) %}{% endcall %}):
{{ ind }}    {% call backward_returns(v) %}{% endcall %}{{ v.backward }}({% call vjp_params(f.inputs, v.cotangents) %}{% endcall %}
{%- if !v.args.is_empty() %}{% if !f.inputs.is_empty() || v.cotangents > 0 %}, {% endif %}{% call args(v.args) %}{% endcall %}{% endif %})
{%- call backward_spread(v, ind) %}{% endcall %}
{%- endif %}
{{ ind }}return {{ p.bind }}(TARGETS[{% call key(k.call.key) %}{% endcall %}], _begen_raw, {% call tuple(f.inputs) %}{% endcall -%}
, _begen_o, {{ p.linear }}, {% if p.jvp.is_some() %}_begen_jvp{% else %}None{% endif %}, (
{%- for (key, i, _) in p.transposes %}{% if !loop.first %}, {% endif %}({{ key }}, _begen_transpose{{ i }}){% endfor %}
{%- if p.transposes.len() == 1 %},{% endif %}), {{ p.names }}{% if p.backward.is_some() %}, _begen_backward{% endif %}
{%- if let Some(fo) = p.fold %}, fold=(_begen_again, {{ fo.inputs }}, {{ fo.outputs }}){% endif %})
{%- else %}
{{ ind }}return {% match k.call.returns -%}
{%- when PyReturn::All %}{{ crate::target::xla_jax::py_call(k.call, k.hoisted)? }}
{%- when PyReturn::First %}{{ crate::target::xla_jax::py_call(k.call, k.hoisted)? }}[0]
{%- when PyReturn::Prefix(n) %}tuple({{ crate::target::xla_jax::py_call(k.call, k.hoisted)? }}[:{{ n }}])
{%- endmatch %}
{%- endif %}
{%- endmacro %}

{#- The XLA FFI call of a kernel; `hoisted`: its attributes were converted
    into `_begen_v<k>` before. -#}
{%- macro call(c, hoisted) -%}
_begen_named({{ c.key.name }}, {% if c.ruled %}_begen_ffi_call(_begen_r, {% else %}_jax.ffi.ffi_call({% endif -%}
TARGETS[{% call key(c.key) %}{% endcall %}], {% if c.results.len() != 1 %}({% endif %}
{%- for r in c.results %}{% if !loop.first %}, {% endif %}
{%- match r %}
{%- when PyResult::Out %}out
{%- when PyResult::OutTuple %}tuple(out)
{%- when PyResult::Ret(k) %}_begen_o[{{ k }}]
{%- when PyResult::Like(x) %}_begen_like({{ x }})
{%- when PyResult::OutItem(k) %}out[{{ k }}]
{%- when PyResult::OutRest(k) %}*tuple(out)[{{ k }}:]
{%- when PyResult::LikeEach(x) %}*(_begen_like(_x) for _x in {{ x }})
{%- when PyResult::LikeEachTuple(x) %}tuple(_begen_like(_x) for _x in {{ x }})
{%- when PyResult::Words(x, n) %}_begen_words({{ x }}, {{ n }})
{%- endmatch %}
{%- endfor %}{% if c.results.len() != 1 %}){% endif %}
{%- if !c.aliases.is_empty() %}, input_output_aliases={{ "{" }}
{%- for (i, o) in c.aliases %}{% if !loop.first %}, {% endif %}{{ i }}: {{ o }}{% endfor %}}
{%- endif %}, vmap_method={{ c.vmap }}{% if c.side_effect %}, has_side_effect=True{% endif %}
{%- if let Some((tune, inputs)) = c.retune %}, pick=lambda _begen_e: TARGETS[_begen_key({{ c.key.name }}, _begen_tune_pick({{ tune }}, _begen_c, _begen_d, {{ inputs }}, _begen_tf, _begen_e))]{% endif %}))(
{%- for a in c.arrays %}{% if !loop.first %}, {% endif %}{{ a }}{% endfor %}
{%- for l in c.lists %}{% if !loop.first || !c.arrays.is_empty() %}, {% endif %}*{{ l }}{% endfor %}
{%- for a in c.attrs %}{% if !loop.first || !c.arrays.is_empty() || !c.lists.is_empty() %}, {% endif %}
{%- if a.keyword %}{{ a.xla }}={% else %}**{{ "{" }}{{ a.xla_lit }}: {% endif %}
{%- if hoisted %}_begen_v{{ loop.index0 }}{% else %}{% call conversion(a.conversion, a.py, a.label) %}{% endcall %}{% endif %}
{%- if !a.keyword %}}{% endif %}
{%- endfor %}
{%- if let Some((kw_shown, kw)) = c.kwargs %}{% if !c.arrays.is_empty() || !c.lists.is_empty() || !c.attrs.is_empty() %}, {% endif %}**_begen_attrs({{ kw_shown }}, {{ kw }}){% endif %})
{%- endmacro %}

{#- A kernel's key in TARGETS. -#}
{%- macro key(key) -%}
{%- if key.instanced %}_begen_key({{ key.name }}, _begen_c){% else %}{{ key.name }}{% endif %}
{%- endmacro %}

{#- The conversion of attribute value `v`, quoting `w` in its errors. -#}
{%- macro conversion(c, v, w) -%}
{%- match c %}
{%- when PyConversion::Scalar(s) %}{% call scalar(s, v, w) %}{% endcall %}
{%- when PyConversion::Struct { leaves, size } %}_begen_struct({{ v }}, (
{%- for (path, offset, s) in leaves %}{% if !loop.first %}, {% endif -%}
({{ path }}, {{ offset }}, lambda x, w: {% call scalar(s, "x", "w") %}{% endcall %})
{%- endfor %}{% if leaves.len() == 1 %},{% endif %}), {{ size }}, {{ w }})
{%- when PyConversion::Record { members } %}_begen_record({{ v }}, (
{%- for (name, ty, s) in members %}{% if !loop.first %}, {% endif -%}
({{ name }}, {{ ty }}, lambda x, w: {% call scalar(s, "x", "w") %}{% endcall %})
{%- endfor %}{% if members.len() == 1 %},{% endif %}), {{ w }})
{%- when PyConversion::Str %}_begen_str({{ v }}, {{ w }})
{%- when PyConversion::Array { ty, wire, element } -%}
_begen_array({{ v }}, {{ ty }}, {{ wire }}, lambda x, w: {% call scalar(element, "x", "w") %}{% endcall %}, {{ w }})
{%- endmatch %}
{%- endmacro %}

{#- A scalar's conversion: its helper, the value, its dtypes, `w`. -#}
{%- macro scalar(s, v, w) -%}
{{ s.helper }}({{ v }}, {% for d in s.dtypes %}{{ d }}, {% endfor %}{{ w }})
{%- endmacro %}

{#- `(a,)`, `(a, b)`, `()` of names. -#}
{%- macro tuple(items) -%}
({{ items|join(", ") }}{% if items.len() == 1 %},{% endif %})
{%- endmacro %}

{#- Arguments of a call. -#}
{%- macro args(list) -%}
{%- for a in list.iter() %}{% if !loop.first %}, {% endif %}
{%- match a %}
{%- when PyArg::Name(x) %}{{ x }}
{%- when PyArg::Cotangent(k) %}_begen_ct{{ k }}
{%- when PyArg::Tangent(k) %}_begen_t{{ k }}
{%- when PyArg::Keyword(name, value) %}{{ name }}={{ value }}
{%- when PyArg::Avals(xs) %}out=
{%- if xs.len() == 1 %}{% for x in xs %}_begen_aval({{ x }}){% endfor %}
{%- else %}({% for x in xs %}{% if !loop.first %}, {% endif %}_begen_aval({{ x }}){% endfor %})
{%- endif %}
{%- endmatch %}
{%- endfor %}
{%- endmacro %}

{#- How a backward closure starts its call: `return`, or `_begen_g =`
    where the result is spread to one cotangent per input. -#}
{%- macro backward_returns(v) -%}
{%- if v.spread.is_some() %}_begen_g = {% else %}return {% endif %}
{%- endmacro %}

{#- The spread: the backward kernel left out the integer inputs'
    cotangents, which are None. #}
{%- macro backward_spread(v, ind) %}
{%- if let Some(sp) = v.spread %}
{{ ind }}    return ({{ sp|join(", ") }})
{%- endif %}
{%- endmacro %}

{#- The inputs, then one cotangent per output. -#}
{%- macro vjp_params(inputs, n: usize) -%}
{{ inputs|join(", ") }}{% for k in 0..*n %}{% if k > 0 || !inputs.is_empty() %}, {% endif %}_begen_ct{{ k }}{% endfor %}
{%- endmacro %}

{#- A related kernel's function called from a rule's closure. -#}
{%- macro related(r) -%}
{{ r.function }}({% call args(r.args) %}{% endcall %}
{%- if !r.args.is_empty() && !r.keywords.is_empty() %}, {% endif %}{% call args(r.keywords) %}{% endcall %})
{%- endmacro %}

{#- An implementation of an algorithm, for the registry. -#}
{%- macro implementation(i) -%}
_BegenImplementation({{ i.algorithm }}, {{ i.function }}, {{ i.platform }}, {{ i.priority }}, {{ "{" }}
{%- for (py, values) in i.unsupported %}{% if !loop.first %}, {% endif %}{{ py }}: {{ values }}{% endfor -%}
}, {% if let Some(n) = i.namespace %}{{ n }}.{% endif %}{{ i.py_name }}, {{ "{" }}
{%- for (a, b) in i.renames %}{% if !loop.first %}, {% endif %}{{ a }}: {{ b }}{% endfor %}}{% if let Some(d) = i.dtypes %}, {{ d }}{% endif %})
{%- endmacro %}
