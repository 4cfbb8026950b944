# frozen_string_literal: true
require "json"
require_relative 'money'

=begin
ghost_block() in a block comment
=end

module Acme
  module Billing
    class Ledger < Base
      include Enumerable
      attr_accessor :rows, :cap

      MAX = 10

      def initialize(cap = MAX)
        @rows = []
        @cap = cap
        super()
      end

      def self.build(opts = {})
        new(opts.fetch(:cap, 4))
      end

      def post(amount)
        raise ArgumentError, "bad #{amount} phantom()" unless valid?(amount)
        rows << amount
        log_post amount
        text = <<~EOS
          heredoc_ghost() text
        EOS
        rows.each do |r|
          notify(r)
        end
      end

      def valid?(x) = x.positive?

      def save!; persist(rows); end

      private

      def log_post(x)
        puts format('%d', x) if x > 0
        pattern = %r{fake_regex()}
        words = %w[alpha beta]
      end

      class << self
        def registry
          @registry ||= {}
        end
      end
    end
  end
end

def helper(x)
  x * 2
end
