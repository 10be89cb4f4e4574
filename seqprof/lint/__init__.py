"""Facts from the profile and the plan, declarative rules over them, findings."""
