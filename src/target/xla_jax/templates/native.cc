{#- The handlers of kernels declared with XLA FFI's own types, printed into
    their source's wrapper after the trampolines (`emit::native`). -#}
{%- for n in natives %}

// {{ n.function }}: {{ n.arg_spec }}
// Declared with XLA FFI's types: bound as declared, called directly.
namespace {{ n.ns }} {
using Fn = decltype(&{{ n.function }});
{%- if let Some(s) = n.state %}
// The per-executable state: what {{ s.function }}() creates, as
// `ffi::ErrorOr<std::unique_ptr<S>>`, for each device that runs the
// executable, on its first call there.
template <typename T>
struct StateOf;
template <typename T>
struct StateOf<xla::ffi::ErrorOr<std::unique_ptr<T>>> {
  using type = T;
};
using S = typename StateOf<decltype({{ s.function }}())>::type;
static xla::ffi::ErrorOr<std::unique_ptr<S>> instantiate() {
  try {
    return {{ s.function }}();
  } catch (const std::exception& begen_e) {
    // Through `Unexpected`: older XLA headers' ErrorOr takes no bare Error.
    return xla::ffi::Unexpected<xla::ffi::Error>(begen::native::failed("{{ s.function }}", &begen_e));
  } catch (...) {
    return xla::ffi::Unexpected<xla::ffi::Error>(begen::native::failed("{{ s.function }}", nullptr));
  }
}
// XLA's one instance of the executable, which it hands every device's call
// (the shards of a shard_map or pmap) at once: no device's state yet.
struct states : begen::native::DeviceStates<S> {
  static xla::ffi::TypeId id;
};
xla::ffi::TypeId states::id = {};
static xla::ffi::ErrorOr<std::unique_ptr<states>> instantiate_states() { return std::make_unique<states>(); }
#if XLA_FFI_API_MINOR >= 2
static XLA_FFI_TypeInfo type_info = xla::ffi::MakeTypeInfo<states>();
#else
static auto type_info = xla::ffi::TypeInfo<states>();
#endif
{%- endif %}
{%- for a in n.aliases %}
{{ a }}
{%- endfor %}
static xla::ffi::Error call({{ n.params|join(", ") }}) {
  try {
    {{ n.call }}
  } catch (const std::exception& begen_e) {
    return begen::native::failed("{{ n.function }}", &begen_e);
  } catch (...) {
    return begen::native::failed("{{ n.function }}", nullptr);
  }
}
}  // namespace {{ n.ns }}

XLA_FFI_DEFINE_HANDLER_SYMBOL({{ n.symbol }}, {{ n.ns }}::call,
                              xla::ffi::Ffi::Bind()
{%- for b in n.bindings %}
                                  {{ b }}
{%- endfor %}{{ n.traits }});
{%- if let Some(s) = n.state %}
XLA_FFI_DEFINE_HANDLER_SYMBOL({{ s.symbol }}, {{ n.ns }}::instantiate_states, xla::ffi::Ffi::BindInstantiate());
// The state type's id and info, for jax.ffi.register_ffi_type.
extern "C" void* {{ s.type_id }}() { return &{{ n.ns }}::states::id; }
extern "C" void* {{ s.type_info }}() { return &{{ n.ns }}::type_info; }
{%- endif %}
{%- endfor -%}
