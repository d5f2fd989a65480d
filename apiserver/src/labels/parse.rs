//! The label selector parser: tokens to requirements (`labels.Parse`).
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/labels/selector.go`
//! (`Parser`, `parse`, `parseRequirement`, `parseKeyAndInferOperator`,
//! `parseOperator`, `parseValues`, `parseIdentifiersList`, `parseExactValue`).
//!
//! Simplified: the parser keeps an index into the scanned token list rather
//! than upstream's `ScannedItem` buffer; error text is upstream's.

use super::lex::{Item, Tok};
use super::requirement::{Op, Requirement, validate_label_key};

/// Operators in the order upstream lists them in "expected: ..." errors.
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

/// Parses selector text into its requirements, in the order written.
pub(super) fn parse(s: &str) -> Result<Vec<Requirement>, String> {
    let mut parser = Parser {
        items: super::lex::scan(s),
        pos: 0,
    };
    parser.parse()
}

/// A cursor over the scanned tokens.
struct Parser {
    items: Vec<Item>,
    pos: usize,
}

/// In value position `in` and `notin` are plain identifiers.
fn as_value(tok: Tok) -> Tok {
    match tok {
        Tok::In | Tok::NotIn => Tok::Identifier,
        t => t,
    }
}

impl Parser {
    fn lookahead(&self, values: bool) -> (Tok, String) {
        let item = &self.items[self.pos.min(self.items.len() - 1)];
        let tok = if values { as_value(item.tok) } else { item.tok };
        (tok, item.lit.clone())
    }

    fn consume(&mut self, values: bool) -> (Tok, String) {
        let out = self.lookahead(values);
        self.pos += 1;
        out
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(true);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(true);
                    match t {
                        Tok::End => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(true);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(format!("found '{l2}', expected: identifier after ','"));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return Requirement::new(&key, op, Vec::new(), false);
        }
        let op = self.parse_operator()?;
        let mut values = match op {
            Op::In | Op::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        values.sort();
        values.dedup();
        Requirement::new(&key, op, values, false)
    }

    /// Returns the key and, for `k` / `!k`, the inferred unary operator.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let (mut tok, mut lit) = self.consume(true);
        let negated = tok == Tok::DoesNotExist;
        if negated {
            (tok, lit) = self.consume(true);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&lit, "<nil>") {
            return Err(e);
        }
        let (next, _) = self.lookahead(true);
        let unary = if negated {
            Some(Op::DoesNotExist)
        } else if matches!(next, Tok::End | Tok::Comma) {
            Some(Op::Exists)
        } else {
            None
        };
        Ok((lit, unary))
    }

    fn parse_operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.consume(false);
        Ok(match tok {
            Tok::In => Op::In,
            Tok::Equals => Op::Equals,
            Tok::DoubleEquals => Op::DoubleEquals,
            Tok::GreaterThan => Op::GreaterThan,
            Tok::LessThan => Op::LessThan,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(true);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(true);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let values = self.parse_identifiers_list()?;
                let (closing, _) = self.consume(true);
                if closing != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Tok::ClosedPar => {
                self.consume(true);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (tok, lit) = self.consume(true);
            match tok {
                Tok::Identifier => {
                    values.push(lit);
                    let (next, next_lit) = self.lookahead(true);
                    match next {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{next_lit}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (next, _) = self.lookahead(true);
                    if next == Tok::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if next == Tok::Comma {
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(true);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(true);
        if tok == Tok::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}
