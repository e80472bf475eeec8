print("anvil")
