"""The errors a stage reports as one line and exit status 1, instead of a traceback: each message
names the bad key, file or value and what is allowed. This module imports nothing, so that the
command line can catch them without importing torch or xarray."""


class IclabError(Exception):
    """An error in what the user gave (config, files, experiment code), not a bug of iclab."""


class UsageError(IclabError, ValueError):
    """A command-line argument or a name given in code names nothing that exists, or is malformed."""


class ConfigError(IclabError, ValueError):
    """The configuration does not match the schema."""


class CubeError(IclabError, RuntimeError):
    """A NetCDF input is missing, unreadable, foreign, or of the wrong kind."""


class ExperimentError(IclabError, ValueError):
    """An experiment package breaks the contract (caught when it is registered or swept)."""


class CheckpointError(IclabError, RuntimeError):
    """A checkpoint is unreadable, holds more than data, or belongs to another job."""


class TrainingDiverged(IclabError, RuntimeError):
    """The training loss became non-finite or grew far above its starting value."""
