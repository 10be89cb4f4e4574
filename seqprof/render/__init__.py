"""What people and tools read: text, JSON, SARIF, GitHub annotations, the HTML report."""
