"""The context-assembly engine: manifest + conversation state -> paired, budgeted messages[]."""
