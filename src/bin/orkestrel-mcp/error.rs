//! How a command fails, and its exit code: the command line was wrong ([`CliError::Usage`],
//! exit 2, as clap's own parse errors) or the run failed ([`CliError::Runtime`], exit 1).

use orkestrel_mcp::ClientError;

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// The user's command line cannot be carried out as given (a target that is both or
    /// neither a URL and a command, a missing tool name, `--args` that is not a JSON object,
    /// a bad header or URL, a bad origin): exit 2, printed the way clap prints its own errors,
    /// with the subcommand's usage.
    Usage(String),
    /// The command ran and failed (the server is unreachable, the tool failed, the stdio server
    /// exited, the port is taken): exit 1.
    Runtime(String),
}

impl CliError {
    /// A [`CliError::Usage`].
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage(message.into())
    }

    /// The process exit code: 2 for usage, 1 for runtime.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Runtime(_) => 1,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            CliError::Usage(m) | CliError::Runtime(m) => m,
        }
    }
}

/// A failure's text is a runtime failure (what the transports, the server and I/O report).
impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Runtime(message)
    }
}

/// [`ClientError::InvalidArguments`] (the caller's input cannot be sent: a bad URL, a bad
/// header, tool arguments that are not an object) is the user's mistake; every other client
/// error is a runtime failure.
impl From<ClientError> for CliError {
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::InvalidArguments(message) => CliError::Usage(message),
            other => CliError::Runtime(other.to_string()),
        }
    }
}
