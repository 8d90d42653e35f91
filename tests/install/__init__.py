"""The project as users install it: the README's first command, the built artifacts."""
