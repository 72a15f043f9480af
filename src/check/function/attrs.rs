//! Struct and array attributes of annotated kernels: which parameters are
//! one (a struct the front end found in the sources, by value or const
//! reference; an array container), the explicit tokens that name them
//! (`attr.p:Affine`, `attr.w:float32[]`), and the checks of a struct's
//! definition, each problem located where it is written.

use super::infer;
use super::tokens::SpecToken;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::decl::{Callee, DeclParam, DeclStruct, Declared, Indirection};
use crate::model::{
    ArrayBinding, AttrType, Container, HalfRepr, Param, RecordMember, RecordType, Token, is_identifier,
};
use crate::source::{SourceMap, Span};

/// The type a string attribute's token names, `attr.<name>:str` (read as
/// a struct's name by the token parser).
pub(in crate::check) const STR: &str = "str";

/// What a parameter's declaration makes it beyond the arg_spec system's
/// table.
pub(in crate::check) enum Shape<'a> {
    /// A struct the front end found, by value or const reference.
    Struct(&'a DeclStruct),
    /// A span or vector of a known element type.
    Array(ArrayDecl),
    /// `std::string_view`, by value or const reference: a string attribute.
    Str,
    /// `BE::Attrs`, by value or const reference: every attribute.
    Dict,
    /// A non-const reference to a class type: the per-executable state
    /// (the type as declared, without C's `struct `).
    State(String),
}

/// An array container as declared.
#[derive(Clone, Copy)]
pub(in crate::check) struct ArrayDecl {
    container: Container,
    /// The element's spelling (from the table of `infer::element_type`).
    element: &'static str,
    /// The element's type, inferred (`uint16_t` is a uint16).
    ty: AttrType,
    /// Set for CUDA's 16-bit float types.
    half: Option<HalfRepr>,
}

/// The parameter's shape if it is a struct or array attribute (`Ok(None)`
/// when it is neither), or the error that makes it an unusable one.
pub(in crate::check) fn shape<'a>(
    c: &'a Declared,
    p: &DeclParam,
    param: &str,
) -> Result<Option<Shape<'a>>, Box<Diagnostic>> {
    // A bare `Tensors` is begen's list unless the sources define a struct of
    // that name.
    let own_struct = |name: &str| c.structs.iter().any(|s| s.name == name);
    if infer::is_tensor_type(&p.ty)
        || (infer::is_tensor_list_type(&p.ty) && !(p.ty == "Tensors" && own_struct("Tensors")))
    {
        return Ok(None);
    }
    let fail = |text: String, hint: String| Err(Box::new(Diagnostic::error(p.span, text).hint(hint)));
    let readable = match p.indirection {
        Indirection::Value => true,
        Indirection::Reference => p.is_const,
        Indirection::Pointer | Indirection::RvalueReference | Indirection::Array | Indirection::Function => false,
    };
    if is_string_view(&p.ty) {
        return if readable {
            Ok(Some(Shape::Str))
        } else {
            fail(msg::string_indirect(&c.name, param, &p.to_string()), msg::hint_string_view(param))
        };
    }
    if is_dict(&p.ty) {
        return if readable {
            Ok(Some(Shape::Dict))
        } else {
            fail(msg::dict_indirect(&c.name, param, &p.to_string()), msg::hint_dict_by_value(param))
        };
    }
    if matches!(p.ty.as_str(), "std::string" | "::std::string") {
        return fail(msg::string_owned(&c.name, param, &p.to_string()), msg::hint_string_view(param));
    }
    if is_state(c, p) {
        let ty = p.ty.strip_prefix("struct ").unwrap_or(&p.ty);
        return Ok(Some(Shape::State(ty.to_string())));
    }
    // `struct S p` (C's elaborated form) names `S` too.
    let ty = p.ty.strip_prefix("struct ").unwrap_or(&p.ty);
    if let Some(s) = c.structs.iter().find(|s| s.name == ty) {
        return match p.indirection {
            _ if readable => Ok(Some(Shape::Struct(s))),
            Indirection::Reference => {
                fail(msg::struct_by_mutable_reference(&c.name, param, &p.to_string()), msg::hint_struct_by_value(ty))
            }
            // A pointer: the scalar rules' error.
            _ => Ok(None),
        };
    }
    let Some((container, inner)) = container(&p.ty) else { return Ok(None) };
    let Some(container) = container else {
        return fail(msg::array_unqualified(&c.name, param, &p.to_string()), msg::HINT_ARRAY_SPANS.into());
    };
    let element = match container {
        Container::Vector => Some(inner),
        Container::XlaSpan | Container::BeSpan => inner.strip_prefix("const ").or_else(|| inner.strip_suffix(" const")),
    };
    let Some(element) = element else {
        let span = p.ty.split('<').next().unwrap_or("Span");
        return fail(msg::array_mutable(&c.name, param, &p.to_string()), msg::hint_array_const(span, inner));
    };
    let Some((element, ty, half)) = infer::element_type(element) else {
        return fail(msg::array_element(&c.name, param, &p.to_string(), element), msg::HINT_ARRAY_ELEMENTS.into());
    };
    if !readable {
        return fail(msg::array_indirect(&c.name, param, &p.to_string()), msg::HINT_ARRAY_BY_VALUE.into());
    }
    Ok(Some(Shape::Array(ArrayDecl { container, element, ty, half })))
}

/// Whether `ty` is the string view XLA decodes a string attribute to.
pub(in crate::check) fn is_string_view(ty: &str) -> bool {
    matches!(ty, "std::string_view" | "::std::string_view")
}

/// Whether `p` is the kernel's per-executable state: a non-const lvalue
/// reference to a type that is no tensor, number, string, dictionary,
/// array container or template parameter of the kernel (a `T&` of the
/// author's own type, which begen.yaml's `instantiate:` function creates).
pub(in crate::check) fn is_state(c: &Declared, p: &DeclParam) -> bool {
    let template_param = c
        .signature
        .as_ref()
        .ok()
        .and_then(|s| s.template.as_ref())
        .is_some_and(|t| t.iter().any(|tp| tp.name.as_deref() == Some(p.ty.as_str())));
    p.indirection == Indirection::Reference
        && !p.is_const
        && !infer::is_tensor_type(&p.ty)
        && !infer::is_tensor_list_type(&p.ty)
        && !is_string_view(&p.ty)
        && !is_dict(&p.ty)
        && infer::element_type(&p.ty).is_none()
        && container(&p.ty).is_none()
        && !template_param
        && !p.ty.contains(['<', '(', '['])
        // A struct of the source by mutable reference is a mistaken
        // attribute, unless begen.yaml makes the kernel stateful.
        && (c.stateful || !c.structs.iter().any(|s| s.name == p.ty.strip_prefix("struct ").unwrap_or(&p.ty)))
}

/// Whether `ty` is begen's dictionary of attributes.
pub(in crate::check) fn is_dict(ty: &str) -> bool {
    matches!(ty, "BE::Attrs" | "::BE::Attrs")
}

/// The container of an array type (`None` for a `Span` without its
/// namespace) and the text between its angle brackets.
fn container(ty: &str) -> Option<(Option<Container>, &str)> {
    const KINDS: &[(&str, Option<Container>)] = &[
        ("xla::ffi::Span<", Some(Container::XlaSpan)),
        ("::xla::ffi::Span<", Some(Container::XlaSpan)),
        ("ffi::Span<", Some(Container::XlaSpan)),
        ("BE::Span<", Some(Container::BeSpan)),
        ("::BE::Span<", Some(Container::BeSpan)),
        ("std::vector<", Some(Container::Vector)),
        ("::std::vector<", Some(Container::Vector)),
        ("Span<", None),
    ];
    KINDS.iter().find_map(|(prefix, kind)| Some((*kind, ty.strip_prefix(prefix)?.strip_suffix('>')?)))
}

/// The parameter a shape makes, named `name` (`ty`: an explicit array
/// type, checked against the element already).
fn param_of(
    c: &Declared,
    shape: &Shape,
    name: &str,
    use_span: Span,
    ty: Option<(AttrType, Option<HalfRepr>)>,
    map: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Option<Param> {
    let mut param = Param {
        name: name.into(),
        py_name: Box::default(),
        token: Token::Stream,
        half_repr: None,
        pointer: None,
        array: None,
        default: None,
    };
    match shape {
        Shape::Struct(s) => {
            param.token =
                Token::Record { name: name.to_string(), ty: Box::new(record(c, s, name, use_span, map, diags)?) };
        }
        Shape::Array(a) => {
            let (ty, half) = ty.unwrap_or((a.ty, a.half));
            param.token = Token::Array { name: name.to_string(), ty };
            param.half_repr = half;
            param.array = Some(Box::new(ArrayBinding { container: a.container, element: a.element.to_string() }));
        }
        Shape::Str => param.token = Token::Str { name: name.to_string() },
        Shape::Dict => param.token = Token::Dict,
        Shape::State(ty) => param.token = Token::State { ty: ty.clone(), at: use_span },
    }
    Some(param)
}

/// A struct or array parameter without a token (auto-detection, or a bare
/// `attr.<name>`): `Ok(None)` when it is neither, `Err(())` once an error
/// is reported.
pub(in crate::check) fn infer_param(
    c: &Declared,
    p: &DeclParam,
    name: &str,
    map: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Result<Option<Param>, ()> {
    match shape(c, p, name) {
        Err(d) => {
            diags.push(*d);
            Err(())
        }
        Ok(None) => Ok(None),
        Ok(Some(shape)) => param_of(c, &shape, name, p.span, None, map, diags).map(Some).ok_or(()),
    }
}

/// What an explicit token at a parameter resolves to here.
pub(in crate::check) enum Explicit {
    /// Neither the token nor the parameter is a struct or array attribute.
    NotMine,
    /// Resolved (`None`: an error was reported).
    Done(Option<Box<Param>>),
}

/// An explicit token at parameter `p` (named `name`), when either is a
/// struct or array attribute.
pub(in crate::check) fn resolve_explicit(
    c: &Declared,
    tok: &SpecToken,
    tok_span: Span,
    p: &DeclParam,
    name: &str,
    map: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Explicit {
    let shape = match shape(c, p, name) {
        Ok(s) => s,
        Err(d) => {
            diags.push(*d);
            return Explicit::Done(None);
        }
    };
    let contradiction = |shown: String| {
        Diagnostic::error(tok_span, msg::token_contradicts(&shown, name, &p.to_string()))
            .with(p.span, msg::LABEL_DECLARED_HERE)
    };
    let named = |an: &str, shown: String, diags: &mut Vec<Diagnostic>| {
        let ok = p.name.as_deref() == Some(an);
        if !ok {
            // A slip of the parameter's name is said as one, with the token as meant.
            diags.push(match crate::diag::suggest::closest(an, p.name.as_deref()) {
                Some(near) => {
                    let fixed = shown.replacen(&format!("attr.{an}"), &format!("attr.{near}"), 1);
                    Diagnostic::error(tok_span, msg::attr_misspelled(&shown, &c.name, name, &fixed))
                        .with(p.span, msg::LABEL_DECLARED_HERE)
                }
                None => contradiction(shown),
            });
        }
        ok
    };
    let done = |param: Option<Param>| Explicit::Done(param.map(Box::new));
    match (tok, &shape) {
        // `attr.<name>:str`: the token of a string attribute.
        (SpecToken::Struct { name: an, ty }, Some(Shape::Str)) if ty == STR => {
            if !named(an, format!("attr.{an}:{STR}"), diags) {
                return done(None);
            }
            done(param_of(c, &Shape::Str, name, p.span, None, map, diags))
        }
        (SpecToken::Struct { name: an, ty }, _) if ty != STR && !c.structs.iter().any(|s| s.name == *ty) => {
            diags.push(unknown_struct(c, an, ty, tok_span, map));
            done(None)
        }
        (SpecToken::Struct { name: an, ty }, Some(Shape::Struct(s))) if s.name == *ty => {
            if !named(an, format!("attr.{an}:{ty}"), diags) {
                return done(None);
            }
            done(param_of(c, &Shape::Struct(s), name, p.span, None, map, diags))
        }
        (SpecToken::Array { name: an, ty }, Some(Shape::Array(a))) => {
            let shown = format!("attr.{an}:{ty}[]");
            if !named(an, shown.clone(), diags) {
                return done(None);
            }
            match infer::explicit_fits(*ty, a.element) {
                Ok(half) => done(param_of(c, &Shape::Array(*a), name, p.span, Some((*ty, half)), map, diags)),
                Err(infer::Contradiction) => {
                    diags.push(contradiction(shown));
                    done(None)
                }
            }
        }
        (SpecToken::Attr { name: an, ty: None }, Some(shape)) => {
            if !named(an, format!("attr.{an}"), diags) {
                return done(None);
            }
            done(param_of(c, shape, name, p.span, None, map, diags))
        }
        (SpecToken::Struct { .. } | SpecToken::Array { .. }, _) | (_, Some(_)) => {
            diags.push(contradiction(tok.to_string()));
            done(None)
        }
        (_, None) => Explicit::NotMine,
    }
}

/// `attr.<name>:<Struct>` without a signature (a macro begen cannot see):
/// the struct's definition is all there is to check.
pub(in crate::check) fn struct_alone(
    c: &Declared,
    attr: &str,
    ty: &str,
    at: Span,
    map: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Option<Param> {
    if ty == STR {
        return param_of(c, &Shape::Str, attr, at, None, map, diags);
    }
    let Some(s) = c.structs.iter().find(|s| s.name == ty) else {
        diags.push(unknown_struct(c, attr, ty, at, map));
        return None;
    };
    param_of(c, &Shape::Struct(s), attr, at, None, map, diags)
}

/// Reports `attr.<name>:<ty>` whose struct the front end did not find
/// (with the other token errors: a misspelt type is caught there).
pub(in crate::check) fn check_struct_known(
    c: &Declared,
    attr: &str,
    ty: &str,
    at: Span,
    map: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    if ty != STR && !c.structs.iter().any(|s| s.name == ty) {
        diags.push(unknown_struct(c, attr, ty, at, map));
    }
}

fn unknown_struct(c: &Declared, attr: &str, ty: &str, at: Span, map: &SourceMap) -> Diagnostic {
    let file = match c.callee {
        Callee::Source { file } => map.get(file).name.clone(),
        Callee::Binary { .. } => String::new(),
    };
    // A slip is of an attribute type (`flaot32`) or of a struct's name.
    let names = AttrType::ALL.iter().map(|t| t.as_str()).chain(c.structs.iter().map(|s| s.name.as_str()));
    let near = crate::diag::suggest::closest(ty, names);
    Diagnostic::error(at, msg::unknown_struct(&c.name, attr, ty, &file, near)).hint(msg::hint_unknown_struct())
}

/// Checks a struct's definition; its type when every member can be bound.
/// Each problem is reported where it is written, with a label at the use.
fn record(
    c: &Declared,
    s: &DeclStruct,
    attr: &str,
    use_span: Span,
    map: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Option<RecordType> {
    let used = msg::label_struct_used(&c.name, attr);
    let mut errors = Vec::new();
    let mut error = |at: Span, text: String, hint: Option<String>| {
        let d = Diagnostic::error(at, text).with(use_span, used.clone());
        errors.push(match hint {
            Some(h) => d.hint(h),
            None => d,
        });
    };
    let name = &s.name;
    for (at, problem) in &s.problems {
        error(*at, msg::struct_problem(name, *problem), None);
    }
    let mut members = Vec::new();
    // A struct that is not plain (a template, a base class, a body begen
    // cannot read) gets that error alone, not one per member.
    let members_of = if s.problems.is_empty() { s.members.as_slice() } else { &[] };
    for m in members_of.iter().filter(|m| !m.is_static) {
        let shown = || format!("{}{}", if m.is_const { "const " } else { "" }, m.ty);
        if !is_identifier(&m.name) {
            error(m.span, msg::member_name(name, &m.name), Some(msg::HINT_IDENTIFIER.into()));
        } else if m.access != "public" {
            error(m.span, msg::member_access(name, &m.name, m.access), None);
        } else if m.nested {
            error(m.span, msg::member_nested(name, &m.name, &m.ty), Some(msg::hint_member_nested(name)));
        } else if m.indirection != Indirection::Value {
            let declared = match m.indirection {
                Indirection::Array => format!("{} {}[...]", shown(), m.name),
                Indirection::Pointer => format!("{}*", shown()),
                _ => format!("{}&", shown()),
            };
            error(m.span, msg::member_indirect(name, &m.name, &declared), Some(msg::HINT_MEMBER_ARRAY.into()));
        } else if m.bitfield {
            error(m.span, msg::member_bitfield(name, &m.name), None);
        } else {
            match infer::element_type(&m.ty) {
                Some((_, ty, _)) if ty.is_complex() => {
                    error(m.span, msg::member_complex(name, &m.name, &m.ty), Some(msg::HINT_MEMBER_COMPLEX.into()))
                }
                Some((_, ty, half_repr)) => members.push(RecordMember { name: m.name.clone(), ty, half_repr }),
                None => error(m.span, msg::member_type(name, &m.name, &m.ty), Some(msg::HINT_MEMBER_TYPES.into())),
            }
        }
    }
    if s.problems.is_empty() && s.members.iter().all(|m| m.is_static) {
        error(s.name_span, msg::struct_empty(name), None);
    }
    if !errors.is_empty() {
        diags.extend(errors);
        return None;
    }
    Some(RecordType {
        name: name.clone(),
        members,
        file: map.get(s.name_span.file).name.clone(),
        line: map.position(s.name_span).0,
        mirror: String::new(),
    })
}

/// The Python literal of an attribute default written as `text` (`1e-5`,
/// `3`, `true`), when it is a value of type `ty`.
pub(in crate::check) fn default_literal(text: &str, ty: AttrType) -> Option<String> {
    use serde_yaml_ng::{Number, Value};
    let value = match text {
        "true" | "True" => Value::Bool(true),
        "false" | "False" => Value::Bool(false),
        _ => {
            if let Ok(v) = text.parse::<i64>() {
                Value::Number(Number::from(v))
            } else if let Ok(v) = text.parse::<u64>() {
                Value::Number(Number::from(v))
            } else if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.'))
                && let Ok(v) = text.parse::<f64>()
            {
                Value::Number(Number::from(v))
            } else {
                return None;
            }
        }
    };
    crate::check::options::algorithms::py_literal(&value, ty)
}
