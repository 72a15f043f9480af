//! The token language of an arg_spec: `arg`, `ret`, `stream`,
//! `attr.<name>[:<type>]`, and the kernix aliases (`args`, `rets`,
//! `ctx.stream`, `attrs.<name>`), normalised on the way in.

use crate::model::AttrType;

/// One token as written, normalised but not yet checked against a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecToken {
    Arg,
    Ret,
    Stream,
    /// `ty` is `None` for the bare form, whose type comes from the signature.
    Attr {
        name: String,
        ty: Option<AttrType>,
    },
}

/// Why a token is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    Unknown,
    /// `attr.` followed by something that is not a C++ identifier.
    BadAttrName(String),
    /// `attr.x:t` with `t` outside the 15 types.
    BadAttrType(String),
}

/// Parses and normalises one token.
pub fn parse_token(raw: &str) -> Result<SpecToken, TokenError> {
    match raw {
        "arg" | "args" => return Ok(SpecToken::Arg),
        "ret" | "rets" => return Ok(SpecToken::Ret),
        "stream" | "ctx.stream" => return Ok(SpecToken::Stream),
        _ => {}
    }
    let Some(attr) = raw.strip_prefix("attr.").or_else(|| raw.strip_prefix("attrs.")) else {
        return Err(TokenError::Unknown);
    };
    let (name, ty) = match attr.split_once(':') {
        Some((name, ty)) => (name, Some(ty)),
        None => (attr, None),
    };
    if !crate::model::is_identifier(name) {
        return Err(TokenError::BadAttrName(name.to_string()));
    }
    let ty = match ty {
        None => None,
        Some(t) => Some(AttrType::parse(t).ok_or_else(|| TokenError::BadAttrType(t.to_string()))?),
    };
    Ok(SpecToken::Attr { name: name.to_string(), ty })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_errors() {
        assert_eq!(parse_token("args"), Ok(SpecToken::Arg));
        assert_eq!(parse_token("rets"), Ok(SpecToken::Ret));
        assert_eq!(parse_token("input"), Err(TokenError::Unknown));
        assert_eq!(parse_token("attr.1x"), Err(TokenError::BadAttrName("1x".into())));
        assert_eq!(parse_token("attr.x:float8"), Err(TokenError::BadAttrType("float8".into())));
        assert_eq!(parse_token("attr.x:"), Err(TokenError::BadAttrType(String::new())));
        for t in AttrType::ALL {
            let tok = format!("attr.v:{t}");
            assert_eq!(parse_token(&tok), Ok(SpecToken::Attr { name: "v".into(), ty: Some(t) }));
        }
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn parse_token() {
        use crate::check::tokens::{SpecToken, parse_token};
        use crate::model::AttrType;
        assert_eq!(parse_token("ctx.stream"), Ok(SpecToken::Stream));
        assert_eq!(parse_token("attrs.alpha"), Ok(SpecToken::Attr { name: "alpha".into(), ty: None }));
        assert_eq!(
            parse_token("attr.alpha:float16"),
            Ok(SpecToken::Attr { name: "alpha".into(), ty: Some(AttrType::Float16) })
        );
    }
}
