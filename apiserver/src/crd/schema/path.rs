//! The path of a value inside a custom resource, printed the two ways
//! upstream prints it: kube-openapi's (`spec.items[0].labels.app`, map keys
//! joined by `.`) for schema errors, and `field.Path`'s
//! (`spec.items[0].labels[app]`) for CEL and list-type errors.

/// One step from the parent value.
#[derive(Clone, Debug)]
pub enum Seg {
    /// A property of an object.
    Field(String),
    /// A key of a map (`additionalProperties`).
    Key(String),
    /// An index of a list.
    Index(usize),
}

/// The steps from the root object.
#[derive(Clone, Debug, Default)]
pub struct Path(Vec<Seg>);

impl Path {
    /// Runs `f` with `seg` appended, then removes it.
    pub fn with<R>(&mut self, seg: Seg, f: impl FnOnce(&mut Path) -> R) -> R {
        self.0.push(seg);
        let r = f(self);
        self.0.pop();
        r
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// kube-openapi's path: fields and keys after `.`, indexes as `[i]`.
    pub fn openapi(&self) -> String {
        self.render(false)
    }

    /// `field.Path`'s rendering: keys as `[key]`.
    pub fn field(&self) -> String {
        self.render(true)
    }

    /// The unknown-field form of miniplane's warnings (as
    /// [`crate::schema::unknown_fields`]): keys after `.`, indexes `[i]`.
    pub fn warning(&self) -> String {
        self.render(false)
    }

    fn render(&self, bracket_keys: bool) -> String {
        let mut s = String::new();
        for seg in &self.0 {
            match seg {
                Seg::Key(k) if bracket_keys => {
                    s.push('[');
                    s.push_str(k);
                    s.push(']');
                }
                Seg::Field(k) | Seg::Key(k) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(k);
                }
                Seg::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }
}
