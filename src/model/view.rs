//! The read-only view of a checked library that the public API hands out
//! (what `begen scan --format json` reports of each function): accessor
//! methods, so the model's fields stay the crate's own.

use super::{Function, Library, Platform};

impl Library {
    /// The library name: `lib<name>.so`, `<name>.py`.
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// println!("lib{}.so", run.library.name());
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The checked functions (those without errors), sorted by file and line.
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// for f in run.library.functions() {
    ///     println!("{}:{} {} -> {}", f.file(), f.line(), f.name(), f.target());
    /// }
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }
}

impl Function {
    /// The C++ function name.
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// let names: Vec<&str> = run.library.functions().iter().map(|f| f.name()).collect();
    /// println!("{}", names.join(", "));
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its XLA FFI target name, `<module>.<function>`.
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// let f = &run.library.functions()[0];
    /// assert_eq!(f.target(), format!("{}.{}", f.module(), f.name()));
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The module it belongs to (the library's prefix when begen.yaml
    /// declares no `modules:`).
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// println!("{}", run.library.functions()[0].module());
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn module(&self) -> &str {
        &self.module
    }

    /// Which compiler and XLA platform its source is for.
    ///
    /// ```no_run
    /// use begen::driver::Platform;
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// let cuda = run.library.functions().iter().filter(|f| f.platform() == Platform::Cuda).count();
    /// println!("{cuda} CUDA kernel(s)");
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The source path relative to the scanned root, `/`-separated.
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// println!("{}", run.library.functions()[0].file());
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line of the function's name in [`Function::file`].
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// assert!(run.library.functions()[0].line() >= 1);
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn line(&self) -> usize {
        self.line
    }
}
