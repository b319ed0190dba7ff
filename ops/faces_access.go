package ops

import "log/slog"

// Logger is the logger the service was made with (WithLogger), for the
// packages above it that report on its behalf: the tool registry logs a
// handler's panic there, with its stack.
func (s *Service) Logger() *slog.Logger { return s.logger }
