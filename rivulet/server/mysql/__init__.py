"""The MySQL-protocol server: connections, sessions, statements, replicas."""
