module Rack
  VERSION = "3.0"
  class Request
    DEFAULT_PORTS = { "http" => 80 }
    def host
      Port = 1
      x = 2
    end
  end
end
