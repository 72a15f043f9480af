//! The token language of an arg_spec: `arg`, `ret`, `stream`,
//! `attr.<name>[:<type>]`, and the kernix aliases (`args`, `rets`,
//! `ctx.stream`, `attrs.<name>`), normalised on the way in; and the typed
//! forms: `arg:<dtype>[<dims>]`, `ret:...`, `inout[:...]`,
//! `dim.<name>[:<type>]` and `const.<NAME>=<v1>,<v2>,...`; and the
//! struct and array attributes: `attr.<name>:<Struct>` (a struct defined in the
//! sources) and `attr.<name>:<dtype>[]` (a 1-D array).

use crate::diag::suggest::closest;
use crate::model::{AttrType, ElementType, Extent, TensorType, is_identifier};

/// One token as written, normalised but not yet checked against a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SpecToken {
    /// `arg`, or `arg:<contract>`.
    Arg(Option<TensorType>),
    /// `ret`, or `ret:<contract>`.
    Ret(Option<TensorType>),
    /// `inout`, or `inout:<contract>`.
    InOut(Option<TensorType>),
    Stream,
    /// `ty` is `None` for the bare form, whose type comes from the signature.
    Attr {
        name: String,
        ty: Option<AttrType>,
    },
    /// `attr.<name>:<Struct>`: a type that is an identifier but none of the
    /// 15 names a struct (found, or not, in the sources by `check`).
    Struct {
        name: String,
        ty: String,
    },
    /// `attr.<name>:<dtype>[]`: a 1-D array attribute.
    Array {
        name: String,
        ty: AttrType,
    },
    /// `dim.<name>`; `ty` as for attrs.
    Dim {
        name: String,
        ty: Option<AttrType>,
    },
    /// `const.<NAME>=<values>`: describes a template parameter, not a
    /// function parameter.
    Const {
        name: String,
        values: Vec<String>,
    },
}

/// The token as written (normalised): what messages quote.
impl std::fmt::Display for SpecToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tensor = |f: &mut std::fmt::Formatter<'_>, word: &str, c: &Option<TensorType>| match c {
            Some(c) => write!(f, "{word}:{c}"),
            None => f.write_str(word),
        };
        match self {
            SpecToken::Arg(c) => tensor(f, "arg", c),
            SpecToken::Ret(c) => tensor(f, "ret", c),
            SpecToken::InOut(c) => tensor(f, "inout", c),
            SpecToken::Stream => f.write_str("stream"),
            SpecToken::Attr { name, ty: Some(ty) } => write!(f, "attr.{name}:{ty}"),
            SpecToken::Attr { name, ty: None } => write!(f, "attr.{name}"),
            SpecToken::Struct { name, ty } => write!(f, "attr.{name}:{ty}"),
            SpecToken::Array { name, ty } => write!(f, "attr.{name}:{ty}[]"),
            SpecToken::Dim { name, ty: Some(ty) } => write!(f, "dim.{name}:{ty}"),
            SpecToken::Dim { name, ty: None } => write!(f, "dim.{name}"),
            SpecToken::Const { name, values } => write!(f, "const.{name}={}", values.join(",")),
        }
    }
}

impl SpecToken {
    /// Whether it stands for one parameter of the signature (`const.` does not).
    pub(crate) fn is_param(&self) -> bool {
        !matches!(self, SpecToken::Const { .. })
    }
}

/// Why a token is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenError {
    Unknown,
    /// `attr.` followed by something that is not a C++ identifier.
    BadAttrName(String),
    /// `attr.x:t` with `t` neither one of the 15 types, `<type>[]` nor an
    /// identifier (a struct's name).
    BadAttrType(String),
    /// `attr.x:t[...]` that is not `<type>[]`.
    BadArrayType(String),
    /// `arg:<x>` where `<x>` is neither a dtype nor a template parameter name.
    BadDtype(String),
    /// A shape that does not read as `[<dim>, ...]`: the text, and why.
    BadShape(String, &'static str),
    /// `dim.` followed by something that is not an identifier.
    BadDimName(String),
    /// `dim.n:<t>` with `<t>` not an integer type.
    BadDimType(String),
    /// `const.` without `<NAME>=` and at least one value.
    BadConst(&'static str),
    /// A `const.` value that is not a literal (integer, `true`, `false` or a dtype).
    BadConstValue(String),
}

/// Parses and normalises one token.
pub(crate) fn parse_token(raw: &str) -> Result<SpecToken, TokenError> {
    match raw {
        "arg" | "args" => return Ok(SpecToken::Arg(None)),
        "ret" | "rets" => return Ok(SpecToken::Ret(None)),
        "inout" => return Ok(SpecToken::InOut(None)),
        "stream" | "ctx.stream" => return Ok(SpecToken::Stream),
        _ => {}
    }
    if let Some((word, contract)) = raw.split_once(':') {
        let tensor = match word {
            "arg" | "args" => Some(SpecToken::Arg as fn(_) -> _),
            "ret" | "rets" => Some(SpecToken::Ret as fn(_) -> _),
            "inout" => Some(SpecToken::InOut as fn(_) -> _),
            _ => None,
        };
        if let Some(make) = tensor {
            return Ok(make(Some(parse_contract(contract)?)));
        }
    }
    if let Some(rest) = raw.strip_prefix("dim.") {
        let (name, ty) = split_type(rest);
        if !is_identifier(name) {
            return Err(TokenError::BadDimName(name.to_string()));
        }
        let ty = match ty {
            None => None,
            Some(t) => match AttrType::parse(t) {
                Some(ty) if ty.is_integer() => Some(ty),
                _ => return Err(TokenError::BadDimType(t.to_string())),
            },
        };
        return Ok(SpecToken::Dim { name: name.to_string(), ty });
    }
    if let Some(rest) = raw.strip_prefix("const.") {
        return parse_const(rest);
    }
    let Some(attr) = raw.strip_prefix("attr.").or_else(|| raw.strip_prefix("attrs.")) else {
        return Err(TokenError::Unknown);
    };
    let (name, ty) = split_type(attr);
    if !is_identifier(name) {
        return Err(TokenError::BadAttrName(name.to_string()));
    }
    let name = name.to_string();
    let Some(t) = ty else { return Ok(SpecToken::Attr { name, ty: None }) };
    if let Some(ty) = AttrType::parse(t) {
        return Ok(SpecToken::Attr { name, ty: Some(ty) });
    }
    if let Some(k) = t.find('[') {
        return match (AttrType::parse(&t[..k]), &t[k..]) {
            (Some(ty), "[]") => Ok(SpecToken::Array { name, ty }),
            _ => Err(TokenError::BadArrayType(t.to_string())),
        };
    }
    if is_identifier(t) {
        return Ok(SpecToken::Struct { name, ty: t.to_string() });
    }
    Err(TokenError::BadAttrType(t.to_string()))
}

/// The token a mistyped one most likely meant (`agr:float32[n]`:
/// `arg:float32[n]`, `strem`: `stream`, `dmi.n`: `dim.n`): a whole token
/// close to a bare one, else the word before its first `:` or `.` replaced
/// by the closest word that takes that separator. None when nothing is close.
pub(crate) fn near_token(raw: &str) -> Option<String> {
    // Words a user may write for a role: what begen calls them.
    match raw {
        "in" | "input" | "inputs" => return Some("arg".to_string()),
        "out" | "output" | "outputs" => return Some("ret".to_string()),
        _ => {}
    }
    let bare = ["arg", "ret", "inout", "stream", "ctx.stream"];
    if let Some(near) = closest(raw, bare) {
        return Some(near.to_string());
    }
    let k = raw.find([':', '.'])?;
    let (head, rest) = raw.split_at(k);
    let heads = if rest.starts_with(':') { ["arg", "ret", "inout"] } else { ["attr", "dim", "const"] };
    closest(head, heads).map(|h| format!("{h}{rest}"))
}

/// The array attribute type a mistyped one most likely meant
/// (`flaot32[]`: `float32[]`).
pub(crate) fn near_array_type(ty: &str) -> Option<String> {
    let (element, brackets) = ty.find('[').map_or((ty, "[]"), |k| (&ty[..k], &ty[k..]));
    if brackets != "[]" {
        // A shape where `[]` belongs is no slip of a name.
        return None;
    }
    closest(element, AttrType::ALL.iter().map(|t| t.as_str())).map(|t| format!("{t}[]"))
}

fn split_type(s: &str) -> (&str, Option<&str>) {
    match s.split_once(':') {
        Some((name, ty)) => (name, Some(ty)),
        None => (s, None),
    }
}

/// `<dtype>` or `<dtype>[<dims>]`.
fn parse_contract(text: &str) -> Result<TensorType, TokenError> {
    let (word, shape) = match text.find('[') {
        Some(k) => (&text[..k], Some(&text[k..])),
        None => (text, None),
    };
    let dtype = match AttrType::parse(word) {
        Some(t) => ElementType::Dtype(t),
        None if is_identifier(word) => ElementType::Param(word.to_string()),
        None => return Err(TokenError::BadDtype(word.to_string())),
    };
    let dims = match shape {
        None => None,
        Some(shape) => Some(parse_shape(shape)?),
    };
    Ok(TensorType { dtype, dims })
}

/// `[n, k, 3]`, `[]`, `[..., n]`, `[rows..., n]`.
fn parse_shape(shape: &str) -> Result<Vec<Extent>, TokenError> {
    let bad = |why| TokenError::BadShape(shape.to_string(), why);
    let inner = shape.strip_prefix('[').and_then(|s| s.strip_suffix(']')).ok_or_else(|| bad("it must end in `]`"))?;
    if inner.contains(['[', ']']) {
        return Err(bad("brackets do not nest"));
    }
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut dims = Vec::new();
    for (i, d) in inner.split(',').enumerate() {
        let d = d.trim();
        if d.is_empty() {
            return Err(bad("a dimension is empty"));
        }
        if let Some(name) = d.strip_suffix("...") {
            if i > 0 {
                return Err(bad("`...` stands first, for the leading dimensions: `[..., n]`"));
            }
            if name.is_empty() {
                dims.push(Extent::Rest(None));
            } else if is_identifier(name) {
                dims.push(Extent::Rest(Some(name.to_string())));
            } else {
                return Err(bad("a named rest is an identifier and `...`: `[rows..., n]`"));
            }
        } else if d.bytes().all(|b| b.is_ascii_digit()) {
            dims.push(Extent::Fixed(d.parse().map_err(|_| bad("a dimension is too large"))?));
        } else if is_identifier(d) {
            dims.push(Extent::Named(d.to_string()));
        } else {
            return Err(bad("each dimension is a name or a non-negative integer"));
        }
    }
    Ok(dims)
}

/// `NAME=v1,v2,...` after `const.`.
fn parse_const(rest: &str) -> Result<SpecToken, TokenError> {
    let Some((name, values)) = rest.split_once('=') else {
        return Err(TokenError::BadConst("it needs `=` and its values: `const.N=64,128`"));
    };
    if !is_identifier(name) {
        return Err(TokenError::BadConst("its name must be a C++ identifier"));
    }
    let mut out = Vec::new();
    for v in values.split(',') {
        let v = v.trim();
        if v.is_empty() {
            return Err(TokenError::BadConst("every value must be written out: `const.N=64,128`"));
        }
        let literal = v == "true"
            || v == "false"
            || AttrType::parse(v).is_some()
            || v.strip_prefix('-').unwrap_or(v).bytes().all(|b| b.is_ascii_digit()) && v != "-";
        if !literal {
            return Err(TokenError::BadConstValue(v.to_string()));
        }
        out.push(v.to_string());
    }
    Ok(SpecToken::Const { name: name.to_string(), values: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(dtype: AttrType, dims: &[&str]) -> Option<TensorType> {
        let dims = dims
            .iter()
            .map(|d| match d.parse() {
                Ok(n) => Extent::Fixed(n),
                Err(_) => Extent::Named(d.to_string()),
            })
            .collect();
        Some(TensorType { dtype: ElementType::Dtype(dtype), dims: Some(dims) })
    }

    #[test]
    fn aliases_and_errors() {
        assert_eq!(parse_token("args"), Ok(SpecToken::Arg(None)));
        assert_eq!(parse_token("rets"), Ok(SpecToken::Ret(None)));
        assert_eq!(parse_token("input"), Err(TokenError::Unknown));
        assert_eq!(parse_token("attr.1x"), Err(TokenError::BadAttrName("1x".into())));
        assert_eq!(parse_token("attr.x:float8"), Ok(SpecToken::Struct { name: "x".into(), ty: "float8".into() }));
        assert_eq!(parse_token("attr.x:"), Err(TokenError::BadAttrType(String::new())));
        assert_eq!(parse_token("attr.x:f-8"), Err(TokenError::BadAttrType("f-8".into())));
        assert_eq!(parse_token("attr.w:float32[]"), Ok(SpecToken::Array { name: "w".into(), ty: AttrType::Float32 }));
        assert_eq!(parse_token("attr.w:float32[n]"), Err(TokenError::BadArrayType("float32[n]".into())));
        assert_eq!(parse_token("attr.w:Affine[]"), Err(TokenError::BadArrayType("Affine[]".into())));
        for t in AttrType::ALL {
            let tok = format!("attr.v:{t}");
            assert_eq!(parse_token(&tok), Ok(SpecToken::Attr { name: "v".into(), ty: Some(t) }));
        }
    }

    #[test]
    fn typed_tensors() {
        assert_eq!(parse_token("arg:float32[n, k]"), Ok(SpecToken::Arg(typed(AttrType::Float32, &["n", "k"]))));
        assert_eq!(parse_token("ret:int8[3,n]"), Ok(SpecToken::Ret(typed(AttrType::Int8, &["3", "n"]))));
        assert_eq!(parse_token("inout:float64[]"), Ok(SpecToken::InOut(typed(AttrType::Float64, &[]))));
        assert_eq!(parse_token("inout"), Ok(SpecToken::InOut(None)));
        assert_eq!(
            parse_token("arg:T[n]"),
            Ok(SpecToken::Arg(Some(TensorType {
                dtype: ElementType::Param("T".into()),
                dims: Some(vec![Extent::Named("n".into())])
            })))
        );
        assert_eq!(
            parse_token("arg:float16"),
            Ok(SpecToken::Arg(Some(TensorType { dtype: ElementType::Dtype(AttrType::Float16), dims: None })))
        );
        assert!(matches!(parse_token("arg:float32[n"), Err(TokenError::BadShape(..))));
        assert!(matches!(parse_token("arg:float32[n,]"), Err(TokenError::BadShape(..))));
        assert!(matches!(parse_token("arg:float32[-1]"), Err(TokenError::BadShape(..))));
        assert!(matches!(parse_token("arg:float32[[n]]"), Err(TokenError::BadShape(..))));
        assert!(matches!(parse_token("arg:float32[99999999999999999999999]"), Err(TokenError::BadShape(..))));
        assert_eq!(parse_token("arg:1x[n]"), Err(TokenError::BadDtype("1x".into())));
        let rest = |name: Option<&str>, dims: &[&str]| {
            let mut v = vec![Extent::Rest(name.map(str::to_string))];
            v.extend(dims.iter().map(|d| Extent::Named(d.to_string())));
            Some(TensorType { dtype: ElementType::Dtype(AttrType::Float32), dims: Some(v) })
        };
        assert_eq!(parse_token("arg:float32[...]"), Ok(SpecToken::Arg(rest(None, &[]))));
        assert_eq!(parse_token("ret:float32[..., n]"), Ok(SpecToken::Ret(rest(None, &["n"]))));
        assert_eq!(parse_token("arg:float32[rows...,n]"), Ok(SpecToken::Arg(rest(Some("rows"), &["n"]))));
        assert_eq!(parse_token("arg:float32[rows...,n]").unwrap().to_string(), "arg:float32[rows...,n]");
        assert!(matches!(parse_token("arg:float32[n, ...]"), Err(TokenError::BadShape(..))));
        assert!(matches!(parse_token("arg:float32[..., ...]"), Err(TokenError::BadShape(..))));
        assert!(matches!(parse_token("arg:float32[1x...]"), Err(TokenError::BadShape(..))));
    }

    #[test]
    fn dims_and_consts() {
        assert_eq!(parse_token("dim.n"), Ok(SpecToken::Dim { name: "n".into(), ty: None }));
        assert_eq!(parse_token("dim.n:uint64"), Ok(SpecToken::Dim { name: "n".into(), ty: Some(AttrType::UInt64) }));
        assert_eq!(parse_token("dim.n:float32"), Err(TokenError::BadDimType("float32".into())));
        assert_eq!(parse_token("dim.2"), Err(TokenError::BadDimName("2".into())));
        assert_eq!(
            parse_token("const.N=64,-1,true"),
            Ok(SpecToken::Const { name: "N".into(), values: vec!["64".into(), "-1".into(), "true".into()] })
        );
        assert_eq!(
            parse_token("const.T=float32,float64"),
            Ok(SpecToken::Const { name: "T".into(), values: vec!["float32".into(), "float64".into()] })
        );
        assert_eq!(parse_token("const.N=BLOCK"), Err(TokenError::BadConstValue("BLOCK".into())));
        assert_eq!(parse_token("const.N=1.5"), Err(TokenError::BadConstValue("1.5".into())));
        assert!(matches!(parse_token("const.N"), Err(TokenError::BadConst(_))));
        assert!(matches!(parse_token("const.N=1,,2"), Err(TokenError::BadConst(_))));
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn parse_token() {
        use crate::check::function::tokens::{SpecToken, parse_token};
        use crate::model::AttrType;
        assert_eq!(parse_token("ctx.stream"), Ok(SpecToken::Stream));
        assert_eq!(parse_token("attrs.alpha"), Ok(SpecToken::Attr { name: "alpha".into(), ty: None }));
        assert_eq!(
            parse_token("attr.alpha:float16"),
            Ok(SpecToken::Attr { name: "alpha".into(), ty: Some(AttrType::Float16) })
        );
    }
}
