@_exported import Anvil
